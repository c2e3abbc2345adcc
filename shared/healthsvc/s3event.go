package healthsvc

import (
	"context"
	"net/url"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/errs"
)

// IngestS3 ingests the bundles an S3 object-created event names (the
// ingest-bundle function). An error makes Lambda retry the event, which is
// safe: ingestion is idempotent.
func (s *Service) IngestS3(ctx context.Context, ev events.S3Event) error {
	for _, rec := range ev.Records {
		key, err := url.QueryUnescape(rec.S3.Object.Key) // S3 event keys are URL-encoded
		if err != nil {
			key = rec.S3.Object.Key
		}
		org, id, err := blobs.ParseKey(key)
		if err != nil {
			s.Log.WarnContext(ctx, "ingest: not a bundle key", "key", key)
			continue
		}
		if err := s.Ingest(ctx, org, id); err != nil {
			if errs.Is(err, errs.NotFound) { // an object with no upload record
				s.Log.WarnContext(ctx, "ingest: no such upload", "org", org, "upload", id)
				continue
			}
			return err
		}
	}
	return nil
}
