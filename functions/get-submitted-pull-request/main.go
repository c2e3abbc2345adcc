// Command get-submitted-pull-request is the Lambda function serving the get-submitted-pull-request endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("get-submitted-pull-request") }
