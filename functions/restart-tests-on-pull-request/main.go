// Command restart-tests-on-pull-request is the Lambda function serving the restart-tests-on-pull-request endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("restart-tests-on-pull-request") }
