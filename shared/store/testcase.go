package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
)

// TestCase is the aggregate item of one test case: everything a read needs,
// kept current as runs arrive, so that reading a test is one GetItem whatever
// the length of its history. Time-window figures are kept as per-hour and
// per-day counters that the reader sums over the window ending now, so they
// stay exact without rewriting the item as time passes.
type TestCase struct {
	Org       string  `dynamodbav:"org"`
	Repo      RepoRef `dynamodbav:"repo"` // spelling the repository was first seen with
	ID        string  `dynamodbav:"id"`
	Name      string  `dynamodbav:"name"`
	Variant   string  `dynamodbav:"variant"`
	FilePath  string  `dynamodbav:"file_path,omitempty"`
	Parent    string  `dynamodbav:"parent,omitempty"`
	Classname string  `dynamodbav:"classname,omitempty"`

	Status    TestStatus `dynamodbav:"status"`
	FirstSeen time.Time  `dynamodbav:"first_seen"`

	// PassedByHour and FailedByHour count runs per unix hour (key: hour
	// number in decimal), pruned beyond the longest window.
	PassedByHour map[string]int `dynamodbav:"passed_h,omitempty"`
	FailedByHour map[string]int `dynamodbav:"failed_h,omitempty"`
	// Failures are the failure clusters, keyed by the normalised text's hash.
	Failures map[string]FailureCluster `dynamodbav:"failures,omitempty"`
	// FailedPRs maps a pull request number to the time of its latest failed
	// run of this test.
	FailedPRs map[string]time.Time `dynamodbav:"failed_prs,omitempty"`

	Codeowners         []string `dynamodbav:"codeowners,omitempty"`
	Quarantined        bool     `dynamodbav:"quarantined"`
	QuarantineOverride string   `dynamodbav:"quarantine_override,omitempty"`
	Ticket             *Ticket  `dynamodbav:"ticket,omitempty"`
}

// TestStatus is a test's health and why.
type TestStatus struct {
	Value     string    `dynamodbav:"value"` // healthy, flaky, broken
	Reason    string    `dynamodbav:"reason"`
	Timestamp time.Time `dynamodbav:"at"`
}

// FailureCluster is one group of similar failures.
type FailureCluster struct {
	Summary string         `dynamodbav:"summary"` // most recent original text, ≤256 chars
	Last    time.Time      `dynamodbav:"last"`
	ByDay   map[string]int `dynamodbav:"by_day"` // occurrences per unix day
}

// Ticket is the issue-tracker ticket linked to a test.
type Ticket struct {
	ID      string `dynamodbav:"id"`
	HTMLURL string `dynamodbav:"html_url"`
}

// GetTestCase reads one test case of a repository: one GetItem. Absent
// repository, absent test and another tenant's test are the same NotFound.
func (s *Store) GetTestCase(ctx context.Context, org string, repo RepoRef, id string) (TestCase, error) {
	var tc TestCase
	err := s.getInto(ctx, testKey(org, repo, id), &tc, "test %s not found in repository %s", id, repo)
	return tc, err
}

// PutTestCase writes a whole test case item. Ingestion maintains these
// items with atomic updates; whole writes are for seeding and tests.
func (s *Store) PutTestCase(ctx context.Context, tc TestCase) error {
	item, err := marshal(tc, testKey(tc.Org, tc.Repo, tc.ID))
	if err != nil {
		return err
	}
	return s.putItem(ctx, &dynamodb.PutItemInput{Item: item})
}

// LinkTicket sets the ticket of an existing test case and records ev in the
// outbox, in one transaction: both happen or neither. NotFound when the test
// does not exist (any more).
func (s *Store) LinkTicket(ctx context.Context, org string, repo RepoRef, id string, t Ticket, ev Event) error {
	tav, err := marshal(t, nil)
	if err != nil {
		return err
	}
	put, err := s.eventPut(org, ev)
	if err != nil {
		return err
	}
	err = s.transact(ctx,
		types.TransactWriteItem{Update: &types.Update{
			Key:                       testKey(org, repo, id),
			UpdateExpression:          aws.String("SET ticket = :t"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberM{Value: tav}},
		}},
		types.TransactWriteItem{Put: put},
	)
	if failedAction(err, 0) {
		return errs.Wrap(errs.NotFound, err, "test %s not found in repository %s", id, repo)
	}
	return err
}
