// Command submit-pull-request is the Lambda function serving the submit-pull-request endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("submit-pull-request") }
