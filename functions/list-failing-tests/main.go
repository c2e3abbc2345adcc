// Command list-failing-tests is the Lambda function serving the list-failing-tests endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("list-failing-tests") }
