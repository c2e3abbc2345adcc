// Command get-merge-queue-metrics is the Lambda function serving the get-merge-queue-metrics endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("get-merge-queue-metrics") }
