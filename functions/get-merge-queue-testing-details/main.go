// Command get-merge-queue-testing-details is the Lambda function serving the get-merge-queue-testing-details endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("get-merge-queue-testing-details") }
