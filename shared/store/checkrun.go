package store

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// The tests' check run of a commit (package healthsvc posts one per
// commit, edited in place as the commit's uploads come) is remembered by a
// small item, made once as the queue's comment is (claims.go):
//
//	check run  PK=ORG#{org}#REPO#{repo}#CHECKRUN#{sha}  SK=CHECKRUN
//	           check_run_id (0 until created), claimed_at (unix ns), ttl
//
// Its own partition, so that reading a commit's batch records never reads it.

// CheckRunRetention is how long a commit's check run is remembered: a
// commit retested later than that gets a new check run.
const CheckRunRetention = 30 * 24 * time.Hour

func checkRunKey(org string, repo repository.Ref, sha string) map[string]types.AttributeValue {
	return key(orgPK(org)+"#REPO#"+repo.Key()+"#CHECKRUN#"+strings.ToLower(sha), "CHECKRUN")
}

// CheckRun reads the check run item of a commit: the check run's id (0
// until created) and when its creation was last claimed; found is false
// when there is none.
func (s *Store) CheckRun(ctx context.Context, org string, repo repository.Ref, sha string) (id int64, claimedAt time.Time, found bool, err error) {
	return s.madeOnce(ctx, checkRunKey(org, repo, sha), attrCheckRunID)
}

// ClaimCheckRun claims the creation of a commit's check run at now: it
// holds when no writer claimed it since staleBefore; a fresh claim of
// another is errs.Conflict.
func (s *Store) ClaimCheckRun(ctx context.Context, org string, repo repository.Ref, sha string, now, staleBefore time.Time) error {
	err := s.claimMaking(ctx, checkRunKey(org, repo, sha), now, staleBefore, now.Add(CheckRunRetention))
	if errs.Is(err, errs.Conflict) {
		return errs.E(errs.Conflict, "another ingest is creating the check run of commit %s", sha)
	}
	return err
}

// SetCheckRunID remembers the id of a commit's check run.
func (s *Store) SetCheckRunID(ctx context.Context, org string, repo repository.Ref, sha string, id int64) error {
	return s.setMadeID(ctx, checkRunKey(org, repo, sha), attrCheckRunID, id)
}

// CommitUpload is what the batch records of a commit say of one of its
// uploads.
type CommitUpload struct {
	ID string
	At time.Time // when its runs happened
	// Recorded is when its first batch record was written: the order of
	// uploads whose runs have the same time.
	Recorded time.Time
	Branch   string
	// Passed and Failed are its tests with a passing and with a failed
	// run (lower-case ids); both empty for an upload the infrastructure
	// guard set aside, which records no tests.
	Passed, Failed map[string]bool
}

// CommitUploads reads the batch records of a repository's commit, by
// upload, oldest first (by their runs' time, then by when they were
// recorded): one Query (a page per 1 MB of records).
func (s *Store) CommitUploads(ctx context.Context, org string, repo repository.Ref, sha string) ([]CommitUpload, error) {
	byID := map[string]*CommitUpload{}
	up := testhealth.UploadRuns{Org: org, Repo: repo, SHA: sha}
	err := s.eachBatch(ctx, up, "begins_with("+AttrSK+", :lo)", "RUNS#", "", "", func(item map[string]types.AttributeValue) {
		rest := strings.TrimPrefix(skOf(item), "RUNS#")
		id := rest[:max(0, strings.LastIndex(rest, "#"))]
		u := byID[id]
		if u == nil {
			u = &CommitUpload{ID: id, At: nanosAttr(item[attrAt]), Branch: strAttr(item[attrBatchBranch]), Passed: map[string]bool{}, Failed: map[string]bool{}}
			byID[id] = u
		}
		if in := nanosAttr(item[attrBatchRecorded]); item[attrBatchRecorded] != nil && (u.Recorded.IsZero() || in.Before(u.Recorded)) {
			u.Recorded = in
		}
		for attr, set := range map[string]map[string]bool{attrBatchPassed: u.Passed, attrBatchFailed: u.Failed} {
			if ss, ok := item[attr].(*types.AttributeValueMemberSS); ok {
				for _, t := range ss.Value {
					set[t] = true
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]CommitUpload, 0, len(byID))
	for _, u := range byID {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		if !out[i].Recorded.Equal(out[j].Recorded) {
			return out[i].Recorded.Before(out[j].Recorded)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
