// Command link-ticket-to-test-case is the Lambda function serving the link-ticket-to-test-case endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("link-ticket-to-test-case") }
