package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// A batch record says that one batch of an upload is done, and which of its
// tests passed and failed on the upload's commit: one item per batch of up
// to MaxBatchTests tests (PK=…#SHA#{sha}, SK=RUNS#{upload}#{batch}, ttl 16
// days), where the earlier layout wrote an item per test per commit. A
// resumed ingest skips the batches recorded (DoneBatches); pass-on-retry
// finds a test that failed and passed on one commit across uploads from
// the records of the commit's other uploads (CommitEvidence). An upload the
// infrastructure guard set aside records no tests: it is no evidence.

func batchPK(org string, repo repository.Ref, sha string) string {
	return orgPK(org) + "#REPO#" + repo.Key() + "#SHA#" + sha
}

func batchSKPrefix(upload string) string { return "RUNS#" + upload + "#" }

// PutBatchRecord records batch up.Batch of an upload as done, with the ids
// of its tests that passed and that failed.
func (s *Store) PutBatchRecord(ctx context.Context, up testhealth.UploadRuns, passed, failed []string) error {
	item := key(batchPK(up.Org, up.Repo, up.SHA), fmt.Sprintf("%s%06d", batchSKPrefix(up.Upload), up.Batch))
	item[attrAt] = num64(up.At.UnixNano())
	// When it was recorded: the order of a commit's uploads whose runs
	// have the same time (the uploader's time is in whole seconds).
	item[attrBatchRecorded] = num64(s.now().UnixNano())
	item[attrBatchBranch] = str(up.Branch)
	item[AttrTTL] = num64(up.At.Add(BatchRetention).Unix())
	if !up.Guarded {
		if len(passed) > 0 {
			item[attrBatchPassed] = &types.AttributeValueMemberSS{Value: lower(passed)}
		}
		if len(failed) > 0 {
			item[attrBatchFailed] = &types.AttributeValueMemberSS{Value: lower(failed)}
		}
	}
	return s.putItem(ctx, &dynamodb.PutItemInput{Item: item})
}

func lower(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strings.ToLower(id)
	}
	return out
}

// DoneBatches returns the batches of an upload already recorded: one Query,
// which finds nothing on a first ingest.
func (s *Store) DoneBatches(ctx context.Context, up testhealth.UploadRuns) (map[int]bool, error) {
	done := map[int]bool{}
	prefix := batchSKPrefix(up.Upload)
	err := s.eachBatch(ctx, up, "begins_with("+AttrSK+", :lo)", prefix, "", AttrSK, func(item map[string]types.AttributeValue) {
		if n, err := strconv.Atoi(strings.TrimPrefix(skOf(item), prefix)); err == nil {
			done[n] = true
		}
	})
	return done, err
}

// eachBatch queries the batch records of up's commit in a range of sort
// keys, page by page.
func (s *Store) eachBatch(ctx context.Context, up testhealth.UploadRuns, cond, lo, hi, projection string, fn func(map[string]types.AttributeValue)) error {
	vals := map[string]types.AttributeValue{":pk": str(batchPK(up.Org, up.Repo, up.SHA)), ":lo": str(lo)}
	if hi != "" {
		vals[":hi"] = str(hi)
	}
	in := &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(pkIs + " AND " + cond),
		ExpressionAttributeValues: vals,
	}
	if projection != "" {
		in.ProjectionExpression = aws.String(projection)
	}
	for {
		out, err := s.query(ctx, in)
		if err != nil {
			return err
		}
		for _, item := range out.Items {
			fn(item)
		}
		if in.ExclusiveStartKey = out.LastEvaluatedKey; in.ExclusiveStartKey == nil {
			return nil
		}
	}
}

// CommitEvidence finds the tests of an upload that failed and passed on its
// commit across uploads, from the batch records of the commit's other
// uploads: those failing here (failedHere) that passed in another upload,
// and those failing in another upload that passed here (read from this
// upload's own records, only when another upload failed). The first pass
// and first failure of each test count, with the branch of the earlier.
// A failure and a pass within this upload are the ingest's to see.
func (s *Store) CommitEvidence(ctx context.Context, up testhealth.UploadRuns, failedHere map[string]bool) (map[string]testhealth.CommitResult, error) {
	type seen struct {
		at     time.Time
		branch string
	}
	earliest := func(m map[string]seen, id string, at time.Time, branch string) {
		if cur, ok := m[id]; !ok || at.Before(cur.at) {
			m[id] = seen{at, branch}
		}
	}
	passed, failed := map[string]seen{}, map[string]seen{}
	other := func(item map[string]types.AttributeValue) {
		at, branch := nanosAttr(item[attrAt]), strAttr(item[attrBatchBranch])
		if ss, ok := item[attrBatchFailed].(*types.AttributeValueMemberSS); ok {
			for _, id := range ss.Value {
				earliest(failed, id, at, branch)
			}
		}
		if ss, ok := item[attrBatchPassed].(*types.AttributeValueMemberSS); ok {
			for _, id := range ss.Value {
				if failedHere[id] {
					earliest(passed, id, at, branch)
				}
			}
		}
	}
	if err := s.eachOtherBatch(ctx, up, other); err != nil {
		return nil, err
	}
	own := batchSKPrefix(up.Upload)
	out := map[string]testhealth.CommitResult{}
	if len(failed) > 0 {
		err := s.eachBatch(ctx, up, "begins_with("+AttrSK+", :lo)", own, "", attrBatchPassed, func(item map[string]types.AttributeValue) {
			if ss, ok := item[attrBatchPassed].(*types.AttributeValueMemberSS); ok {
				for _, id := range ss.Value {
					if _, ok := failed[id]; ok {
						earliest(passed, id, up.At.UTC(), up.Branch)
					}
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	for id := range failedHere {
		earliest(failed, id, up.At.UTC(), up.Branch)
	}
	for id, p := range passed {
		f, ok := failed[id]
		if !ok {
			continue
		}
		branch := p.branch
		if f.at.Before(p.at) {
			branch = f.branch
		}
		out[id] = testhealth.CommitResult{SHA: up.SHA, Branch: branch, PassedAt: p.at, FailedAt: f.at}
	}
	return out, nil
}

// eachOtherBatch calls fn with each batch record of up's commit that is not
// up's own.
func (s *Store) eachOtherBatch(ctx context.Context, up testhealth.UploadRuns, fn func(map[string]types.AttributeValue)) error {
	own := batchSKPrefix(up.Upload)
	if err := s.eachBatch(ctx, up, AttrSK+" BETWEEN :lo AND :hi", "RUNS#", own, "", fn); err != nil {
		return err
	}
	return s.eachBatch(ctx, up, AttrSK+" > :lo", own+"\uffff", "", "", fn)
}

// CommitSoFar tells what the commit's other uploads recorded of the tests
// ids (those that failed in up): whether each failed there, and passed.
// The broken streak counts a commit once (testhealth.TallyRuns): read
// before up's runs are counted, one Query of the commit's batch records,
// which finds none on a commit's first upload. Two uploads of one commit
// counted at the very same time may both count it: the streak is then one
// commit longer than it should be.
func (s *Store) CommitSoFar(ctx context.Context, up testhealth.UploadRuns, ids map[string]bool) (map[string]testhealth.CommitSoFar, error) {
	out := map[string]testhealth.CommitSoFar{}
	mark := func(item map[string]types.AttributeValue, attr string, set func(*testhealth.CommitSoFar)) {
		if ss, ok := item[attr].(*types.AttributeValueMemberSS); ok {
			for _, id := range ss.Value {
				if ids[id] {
					c := out[id]
					set(&c)
					out[id] = c
				}
			}
		}
	}
	err := s.eachOtherBatch(ctx, up, func(item map[string]types.AttributeValue) {
		mark(item, attrBatchFailed, func(c *testhealth.CommitSoFar) { c.Failed = true })
		mark(item, attrBatchPassed, func(c *testhealth.CommitSoFar) { c.Passed = true })
	})
	return out, err
}
