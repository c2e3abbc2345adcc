// Command cancel-pull-request is the Lambda function serving the cancel-pull-request endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("cancel-pull-request") }
