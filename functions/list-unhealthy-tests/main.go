// Command list-unhealthy-tests is the Lambda function serving the list-unhealthy-tests endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("list-unhealthy-tests") }
