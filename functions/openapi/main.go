// Command openapi is the Lambda function serving the API's OpenAPI document.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("openapi") }
