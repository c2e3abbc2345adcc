package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

// streamRecord decodes a record as DynamoDB Streams sends it (the event
// source's JSON), so that the test goes through the same decoding.
func streamRecord(t *testing.T, name string, keys, image map[string]any) events.DynamoDBEventRecord {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"eventName": name, "dynamodb": map[string]any{"Keys": keys, "NewImage": image}})
	if err != nil {
		t.Fatal(err)
	}
	var rec events.DynamoDBEventRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestInsertedCommandQueue: the queue of an inserted command item is read
// from its new image; any other record is none.
func TestInsertedCommandQueue(t *testing.T) {
	t.Parallel()
	s := func(v string) map[string]string { return map[string]string{"S": v} }
	sk := store.NewCommandSK(time.Unix(1_700_000_000, 0))
	image := map[string]any{
		"PK": s("ORG#acme#Q#github.com/acme/web#main"), "SK": s(sk),
		"org": s("acme"), "host": s("github.com"), "owner": s("acme"), "name": s("web"), "branch": s("main"),
	}
	keys := map[string]any{"PK": image["PK"], "SK": image["SK"]}
	want := store.QueueKey{Org: "acme", Repo: repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}, Branch: "main"}
	cases := []struct {
		name   string
		rec    events.DynamoDBEventRecord
		want   store.QueueKey
		wantOK bool
	}{
		{"a command inserted", streamRecord(t, "INSERT", keys, image), want, true},
		{"a command marked", streamRecord(t, "MODIFY", keys, image), store.QueueKey{}, false},
		{"the queue item", streamRecord(t, "INSERT", map[string]any{"PK": image["PK"], "SK": s("QUEUE")}, image), store.QueueKey{}, false},
		{"a sort key of another type", streamRecord(t, "INSERT", map[string]any{"PK": image["PK"], "SK": map[string]string{"N": "1"}}, image), store.QueueKey{}, false},
		{"no organization in the image", streamRecord(t, "INSERT", keys, map[string]any{"SK": s(sk), "branch": s("main")}), store.QueueKey{}, false},
	}
	for _, c := range cases {
		got, ok := store.InsertedCommandQueue(c.rec)
		if ok != c.wantOK {
			t.Errorf("%s: ok %v, want %v", c.name, ok, c.wantOK)
		}
		if d := cmp.Diff(got, c.want); ok && d != "" {
			t.Errorf("%s (-got +want):\n%s", c.name, d)
		}
	}
}
