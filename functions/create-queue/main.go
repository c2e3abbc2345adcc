// Command create-queue is the Lambda function serving the create-queue endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("create-queue") }
