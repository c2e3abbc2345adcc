// Command list-quarantined-tests is the Lambda function serving the list-quarantined-tests endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/testendpoints"
)

func main() { lambdafn.Main("list-quarantined-tests", testendpoints.Group) }
