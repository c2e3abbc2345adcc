// Command get-test-details is the Lambda function serving the get-test-details endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("get-test-details") }
