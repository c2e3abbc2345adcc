// Command ingest-bundle is the Lambda function that ingests upload bundles as they land in the bucket.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("ingest-bundle") }
