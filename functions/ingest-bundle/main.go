// Command ingest-bundle is the Lambda function that ingests upload bundles as they land in the bucket.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/queuesvc"
)

func main() {
	lambdafn.EventMain(func(ctx context.Context, b *lambdafn.Base) (func(context.Context, events.S3Event) error, error) {
		awsCfg, err := lambdafn.AWSConfig(b.Config.Region, b.Config.S3Endpoint)
		if err != nil {
			return nil, err
		}
		bundles := blobs.NewS3(awsCfg, b.Config.BundleBucket, b.Config.S3Endpoint)
		v := healthview.Viewer{PublicAppURL: b.Config.PublicAppURL}
		h := healthsvc.New(b.Store, bundles, v, b.Now, b.NewID, b.Log)
		// A pull request's commit gets its check run as its uploads are ingested.
		gh, err := queuesvc.Client(b.Config, b.Now)
		if err != nil {
			return nil, err
		}
		if gh != nil {
			h.Checks = healthsvc.NewChecks(gh, config.EnterpriseHost(b.Config.GitHubAPIURL))
		}
		return h.IngestS3, nil
	})
}
