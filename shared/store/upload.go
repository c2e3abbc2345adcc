package store

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
)

// States of an upload.
const (
	UploadCreated  = "CREATED"  // createBundleUpload answered; the bundle may come
	UploadIngested = "INGESTED" // its runs are recorded
	UploadFailed   = "FAILED"   // refused; Reason says why, nothing was recorded
	UploadExpired  = "EXPIRED"  // no bundle came before its address expired
)

// ResumeGrace is how long after its address expires (or its lease lapses)
// an upload that has not finished is looked at again (DueUploads).
const ResumeGrace = 5 * time.Minute

// Upload is one bundle upload, from createBundleUpload to its ingestion.
type Upload struct {
	ID            string         `dynamodbav:"upload_id"`
	Org           string         `dynamodbav:"org"`
	Repo          repository.Ref `dynamodbav:"repo"`
	BlobKey       string         `dynamodbav:"blob_key"` // where the bundle is stored
	ClientVersion string         `dynamodbav:"client_version,omitempty"`
	State         string         `dynamodbav:"state"`
	Reason        string         `dynamodbav:"reason,omitempty"`
	CreatedAt     time.Time      `dynamodbav:"created_at"`
	FinishedAt    time.Time      `dynamodbav:"finished_at,omitempty"`
	// What the bundle held, once ingested.
	Files, Tests, Runs, Passed, Failed, Skipped int
	SHA, Branch                                 string
	PR                                          int
	// Guarded: the infrastructure guard set the upload aside, because
	// GuardFailed of its GuardCases test cases failed (a test case that
	// passed on a retry inside the upload did not).
	Guarded     bool `dynamodbav:"guarded,omitempty"`
	GuardCases  int  `dynamodbav:"guard_cases,omitempty"`
	GuardFailed int  `dynamodbav:"guard_failed,omitempty"`
	// FailedTests are the tests that failed (and did not pass on a retry)
	// in the upload, at most MaxFailedTests of FailedTestsTotal: what its
	// page and its labels show, and on a merge-queue test branch the
	// evidence the queue reads before it ejects a PR.
	FailedTests      []FailedTestRef `dynamodbav:"failed_tests,omitempty"`
	FailedTestsTotal int             `dynamodbav:"failed_tests_total,omitempty"`
	// Evidence: the upload is of a merge-queue test branch, and with
	// failed tests it is indexed by its sha (TestBranchUploads). Not
	// stored: FinishUpload reads it.
	Evidence bool `dynamodbav:"-"`
	// RunsAt is when the upload's runs happened, as ingestion counted
	// them.
	RunsAt time.Time `dynamodbav:"runs_at,omitempty"`
	// ResumeAt is when an upload not finished by then is due for the
	// scheduler: its address's expiry plus ResumeGrace when created, the
	// end of its lease plus ResumeGrace while an ingest holds it.
	ResumeAt time.Time `dynamodbav:"resume_at,omitempty"`
	// Lease names the ingest working on the upload, until LeaseUntil.
	Lease      string    `dynamodbav:"lease,omitempty"`
	LeaseUntil time.Time `dynamodbav:"lease_until,omitempty"`
}

// FailedTestRef names a failed test of an upload.
type FailedTestRef struct {
	ID   string `dynamodbav:"id"`
	Name string `dynamodbav:"name"`
	// Failed counts its failed runs in the upload.
	Failed int `dynamodbav:"n,omitempty"`
}

// MaxFailedTests bounds the failed tests an upload keeps: an upload where
// more failed is no flaky run, and the item stays small.
const MaxFailedTests = 50

// maxFailedTestName bounds a failed test's name as an upload keeps it.
const maxFailedTestName = 256

func uploadKey(org, id string) map[string]types.AttributeValue {
	return key(orgPK(org)+"#UPLOAD#"+id, "UPLOAD")
}

// pendingPK is the GSI2 partition of an organization's unfinished uploads,
// sorted by when each is due (ResumeAt).
func pendingPK(org string) string { return orgPK(org) + "#PENDING_UPLOADS" }

func pendingSK(at time.Time, id string) string { return at.UTC().Format(SortableTime) + "#" + id }

// CreateUpload records a new upload, due at u.ResumeAt (default: half an
// hour after it was created) unless it finishes; Conflict when the id
// exists.
func (s *Store) CreateUpload(ctx context.Context, u Upload) error {
	u.State = UploadCreated
	if u.ResumeAt.IsZero() {
		u.ResumeAt = u.CreatedAt.Add(30 * time.Minute)
	}
	item, err := marshal(u, uploadKey(u.Org, u.ID))
	if err != nil {
		return err
	}
	item[AttrGSI1PK] = str(orgPK(u.Org) + "#UPLOADS")
	item[AttrGSI1SK] = str(u.CreatedAt.UTC().Format(SortableTime) + "#" + u.ID)
	item[AttrGSI2PK] = str(pendingPK(u.Org))
	item[AttrGSI2SK] = str(pendingSK(u.ResumeAt, u.ID))
	item[AttrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(u.CreatedAt.Add(RunRetention).Unix(), 10)}
	return s.putItem(ctx, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String(ifItemAbsent)})
}

// GetUpload reads an upload of org; NotFound when absent.
func (s *Store) GetUpload(ctx context.Context, org, id string) (Upload, error) {
	var u Upload
	err := s.getInto(ctx, uploadKey(org, id), &u, "upload %s not found", id)
	return u, err
}

// FinishUpload records the outcome of ingesting an upload: u's state,
// reason and counts. Only a CREATED upload can finish, so a repeated ingest
// reports Conflict and changes nothing.
func (s *Store) FinishUpload(ctx context.Context, u Upload) error {
	u.FinishedAt = s.now().UTC()
	u.Reason = clipBytes(u.Reason, 2048)
	u.FailedTests = slices.Clone(u.FailedTests)
	for i := range u.FailedTests { // a test's name may be long: the item must stay small
		u.FailedTests[i].Name = clipBytes(u.FailedTests[i].Name, maxFailedTestName)
	}
	item, err := marshal(u, nil)
	if err != nil {
		return err
	}
	up := newUpdate()
	for _, attr := range []string{attrState, attrReason, attrFinishedAt, attrFiles, attrTests, attrRuns, attrPassed, attrFailed, attrSkipped, attrUploadSHA, attrUploadBranch, attrUploadPR, attrFailedTests, attrFailedTestsTotal, attrRunsAt, attrGuarded, attrGuardCases, attrGuardFailed} {
		if v, ok := item[attr]; ok {
			up.setTo(attr, v)
		}
	}
	// A finished upload leaves the pending index, for the evidence index
	// when it is a failed test-branch run.
	remove := []string{up.name(attrLease), up.name(attrLeaseUntil), up.name(attrResumeAt)}
	if u.Evidence && len(u.FailedTests) > 0 && u.SHA != "" && u.State == UploadIngested {
		up.setTo(AttrGSI2PK, str(shaUploadsPK(u.Org, u.Repo, u.SHA)))
		up.setTo(AttrGSI2SK, str(u.CreatedAt.UTC().Format(SortableTime)+"#"+u.ID))
	} else {
		remove = append(remove, up.name(AttrGSI2PK), up.name(AttrGSI2SK))
	}
	cond := up.name(attrState) + " = " + up.value(str(UploadCreated))
	_, err = s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key: uploadKey(u.Org, u.ID), UpdateExpression: aws.String(withRemove(up.expression(), remove)),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: up.names, ExpressionAttributeValues: up.values,
	})
	if errs.Is(err, errs.Conflict) {
		return errs.Wrap(errs.Conflict, err, "upload %s was already ingested", u.ID)
	}
	return err
}

// ClaimUpload gives the ingest named lease the upload until until: when it
// is not finished and no other ingest holds a lease that has not lapsed.
// The same lease claims again to renew. The upload becomes due for the
// scheduler ResumeGrace after the lease ends. Conflict when another ingest
// holds it or it is finished; NotFound when there is no such upload.
func (s *Store) ClaimUpload(ctx context.Context, org, id, lease string, until time.Time) error {
	up := newUpdate()
	up.setTo(attrLease, str(lease))
	up.setTo(attrLeaseUntil, str(until.UTC().Format(SortableTime))) // compared as text: fixed width
	resume := until.Add(ResumeGrace)
	up.setTo(attrResumeAt, timeStr(resume))
	up.setTo(AttrGSI2SK, str(pendingSK(resume, id)))
	st, l, lu := up.name(attrState), up.name(attrLease), up.name(attrLeaseUntil)
	cond := ifItemExists + " AND " + st + " = " + up.value(str(UploadCreated)) +
		" AND (attribute_not_exists(" + l + ") OR " + l + " = " + up.value(str(lease)) +
		" OR " + lu + " < " + up.value(str(s.now().UTC().Format(SortableTime))) + ")"
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key: uploadKey(org, id), UpdateExpression: aws.String(up.expression()),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: up.names, ExpressionAttributeValues: up.values,
	})
	return err
}

// DueUploads lists an organization's unfinished uploads that are due at
// now (an address that expired unused, a lease that lapsed), oldest due
// first, at most limit: one Query of the pending index.
func (s *Store) DueUploads(ctx context.Context, org string, now time.Time, limit int32) ([]Upload, error) {
	out, err := s.query(ctx, &dynamodb.QueryInput{
		IndexName:              aws.String(IndexGSI2),
		KeyConditionExpression: aws.String(gsi2PKIs + " AND " + AttrGSI2SK + " < :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(pendingPK(org)), ":now": str(now.UTC().Format(SortableTime)),
		},
		Limit: aws.Int32(limit),
	})
	if err != nil {
		return nil, err
	}
	return unmarshalAll[Upload](out.Items)
}

func shaUploadsPK(org string, repo repository.Ref, sha string) string {
	return orgPK(org) + "#REPO#" + repo.Key() + "#SHA#" + strings.ToLower(sha)
}

// TestBranchUploads lists the ingested uploads with failed tests of a
// repository's commit sha created at or after since, oldest first: a Query
// on GSI2 (one page but for dozens of failed CI shards of one commit).
// Uploads that failed to ingest, or are not ingested yet, are not among
// them.
func (s *Store) TestBranchUploads(ctx context.Context, org string, repo repository.Ref, sha string, since time.Time) ([]Upload, error) {
	var out []Upload
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		IndexName:              aws.String(IndexGSI2),
		KeyConditionExpression: aws.String(gsi2PKIs + " AND " + AttrGSI2SK + " >= :since"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(shaUploadsPK(org, repo, sha)), ":since": str(since.UTC().Format(SortableTime)),
		},
	}, func(item map[string]types.AttributeValue) error {
		var u Upload
		if err := unmarshal(item, &u); err != nil {
			return err
		}
		out = append(out, u)
		return nil
	})
	return out, err
}

// ListUploads lists an organization's newest uploads, newest first.
func (s *Store) ListUploads(ctx context.Context, org string, limit int32) ([]Upload, error) {
	out, err := s.query(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexGSI1),
		KeyConditionExpression:    aws.String(gsi1PKIs),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(orgPK(org) + "#UPLOADS")},
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(limit),
	})
	if err != nil {
		return nil, err
	}
	return unmarshalAll[Upload](out.Items)
}

// Secret returns the deployment's secret of the given name (32 random
// bytes), creating it on first use. All functions of a deployment share it
// through the table, so nothing has to be configured: it signs page tokens
// and the local server's upload addresses.
func (s *Store) Secret(ctx context.Context, name string, fresh func() []byte) ([]byte, error) {
	k := key("SECRET#"+name, "SECRET")
	var got struct {
		Value []byte `dynamodbav:"value"`
	}
	err := s.getInto(ctx, k, &got, "no secret")
	if err == nil {
		return got.Value, nil
	}
	if !errs.Is(err, errs.NotFound) {
		return nil, err
	}
	item := map[string]types.AttributeValue{AttrPK: k[AttrPK], AttrSK: k[AttrSK], attrValue: &types.AttributeValueMemberB{Value: fresh()}}
	err = s.putItem(ctx, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String(ifItemAbsent)})
	if err != nil && !errs.Is(err, errs.Conflict) {
		return nil, err
	}
	// Created by us or, in a race, by another function: read the winner.
	if err := s.getInto(ctx, k, &got, "no secret"); err != nil {
		return nil, err
	}
	return got.Value, nil
}
