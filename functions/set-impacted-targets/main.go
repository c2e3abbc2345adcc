// Command set-impacted-targets is the Lambda function serving the set-impacted-targets endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("set-impacted-targets") }
