// Command create-bundle-upload is the Lambda function serving the create-bundle-upload endpoint.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("create-bundle-upload") }
