// Command list-pull-requests is the Lambda function serving the list-pull-requests endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("list-pull-requests") }
