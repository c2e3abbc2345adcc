package dynamolocal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mainguard/mainguard/shared/dynamolocal"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// TestDataSurvivesARestart is what `mainguard serve` relies on: with a data
// directory, a table created before a stop is there after the next start.
func TestDataSurvivesARestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	in, err := dynamolocal.Start(ctx, dynamolocal.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.EnsureTable(ctx, storetest.NewClient(in.Endpoint), "kept"); err != nil {
		in.Stop()
		t.Fatal(err)
	}
	in.Stop()
	in.Stop() // stopping twice is harmless

	in, err = dynamolocal.Start(ctx, dynamolocal.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop()
	out, err := storetest.NewClient(in.Endpoint).ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TableNames) != 1 || out.TableNames[0] != "kept" {
		t.Errorf("tables after restart: %v", out.TableNames)
	}
}

func TestMissingInstallIsExplained(t *testing.T) {
	t.Parallel()
	_, err := dynamolocal.Start(context.Background(), dynamolocal.Options{Root: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "npm ci") {
		t.Errorf("got %v, want a hint to run npm ci", err)
	}
}

// TestSupervisedRestartsAfterACrash kills a supervised DynamoDB Local as a
// crash would: it answers again at the same endpoint, with its data.
func TestSupervisedRestartsAfterACrash(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	restarts := make(chan error, 4)
	sv, err := dynamolocal.Supervise(ctx, dynamolocal.Options{DataDir: t.TempDir()}, func(err error) { restarts <- err })
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Stop()
	db := storetest.NewClient(sv.Endpoint)
	if _, err := store.EnsureTable(ctx, db, "kept"); err != nil {
		t.Fatal(err)
	}
	sv.Kill()
	select {
	case <-restarts:
	case <-ctx.Done():
		t.Fatal("not restarted")
	}
	out, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil || len(out.TableNames) != 1 || out.TableNames[0] != "kept" {
		t.Errorf("after the restart: %v %v", out, err)
	}
	sv.Stop()
	sv.Stop()
}
