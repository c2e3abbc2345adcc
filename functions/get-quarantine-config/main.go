// Command get-quarantine-config is the Lambda function serving the get-quarantine-config endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("get-quarantine-config") }
