// Command web is the Lambda function serving the web app: every path of
// the HTTP API outside the route table.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/webapp"
)

func main() { lambdafn.WebMain(webapp.Handler) }
