// Command update-queue is the Lambda function serving the update-queue endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("update-queue") }
