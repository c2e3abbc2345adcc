// Command github-webhook is the Lambda function serving the github-webhook endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("github-webhook") }
