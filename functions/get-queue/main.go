// Command get-queue is the Lambda function serving the get-queue endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("get-queue") }
