// Package storetest gives tests a real DynamoDB: one DynamoDB Local per
// `go test` run of a package (or the one at DYNAMODB_ENDPOINT), and a fresh
// table per test, so tests never see each other's data.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/dynamolocal"
	"github.com/mainguard/mainguard/shared/store"
)

var endpoint string

// Main runs a package's tests against DynamoDB Local. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }
func Main(m *testing.M) int {
	endpoint = os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		// As long as the JVM needs on a loaded machine, saying so on stderr.
		ctx, cancel := context.WithTimeout(context.Background(), dynamolocal.HangGuard)
		in, err := dynamolocal.Start(ctx, dynamolocal.Options{Progress: os.Stderr})
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "storetest:", err)
			return 2
		}
		defer in.Stop()
		endpoint = in.Endpoint
	}
	return m.Run()
}

// Endpoint is the DynamoDB Local address in use.
func Endpoint() string { return endpoint }

// Client returns a DynamoDB client for DynamoDB Local.
func Client(tb testing.TB) *dynamodb.Client {
	tb.Helper()
	if endpoint == "" {
		tb.Fatal("storetest: call storetest.Main from TestMain")
	}
	return NewClient(endpoint)
}

// NewClient returns a client for a DynamoDB Local at endpoint; DynamoDB Local
// accepts any credentials.
func NewClient(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
}

// NewTable creates a fresh table and deletes it when the test ends.
func NewTable(tb testing.TB) (*dynamodb.Client, string) {
	tb.Helper()
	db := Client(tb)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	// A guard against a hang, not a speed requirement.
	ctx, cancel := context.WithTimeoutCause(context.Background(), 3*time.Minute,
		fmt.Errorf("DynamoDB Local at %s did not create a table within 3 minutes", endpoint))
	defer cancel()
	fail := func(what string, err error) {
		if cause := context.Cause(ctx); cause != nil {
			err = fmt.Errorf("%w (%v)", err, cause)
		}
		tb.Fatalf("storetest: %s: %v", what, err)
	}
	if _, err := store.EnsureTable(ctx, db, name); err != nil {
		fail("create table", err)
	}
	// Tests run on driven clocks set in the past of the wall clock, where
	// every ttl the store writes has passed already: DynamoDB Local would
	// delete such items at any moment, in the middle of a test.
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               &name,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(store.AttrTTL), Enabled: aws.Bool(false)},
	}); err != nil {
		fail("turn ttl off", err)
	}
	tb.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name})
	})
	return db, name
}

// New returns a store on a fresh table, with the given clock (nil: time.Now).
func New(tb testing.TB, now func() time.Time) *store.Store {
	tb.Helper()
	db, name := NewTable(tb)
	return store.New(db, name, now)
}
