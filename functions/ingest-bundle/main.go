// Command ingest-bundle is the Lambda function that ingests upload bundles as they land in the bucket.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/health"
)

func main() { lambdafn.EventMain(health.IngestBundle) }
