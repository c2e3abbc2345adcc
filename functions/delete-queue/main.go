// Command delete-queue is the Lambda function serving the delete-queue endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("delete-queue") }
