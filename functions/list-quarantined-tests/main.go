// Command list-quarantined-tests is the Lambda function serving the list-quarantined-tests endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("list-quarantined-tests") }
