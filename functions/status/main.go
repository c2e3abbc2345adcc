// Command status is the Lambda function serving the status endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("status") }
