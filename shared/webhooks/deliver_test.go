package webhooks_test

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/webhooks"
)

func TestStreamOrgs(t *testing.T) {
	t.Parallel()
	rec := func(name, pk, sk string) map[string]any {
		return map[string]any{"eventName": name, "dynamodb": map[string]any{"Keys": map[string]any{
			"PK": map[string]string{"S": pk}, "SK": map[string]string{"S": sk},
		}}}
	}
	cases := []struct {
		name    string
		records []map[string]any
		want    []string
	}{
		{"one insert", []map[string]any{rec("INSERT", "ORG#acme#EVENT#msg_1", "EVENT")}, []string{"acme"}},
		{"each organization once, in order", []map[string]any{
			rec("INSERT", "ORG#b#EVENT#msg_1", "EVENT"), rec("INSERT", "ORG#a#EVENT#msg_2", "EVENT"), rec("INSERT", "ORG#b#EVENT#msg_3", "EVENT"),
		}, []string{"b", "a"}},
		{"a reschedule is not new", []map[string]any{rec("MODIFY", "ORG#acme#EVENT#msg_1", "EVENT")}, nil},
		{"a removal is not new", []map[string]any{rec("REMOVE", "ORG#acme#EVENT#msg_1", "EVENT")}, nil},
		{"another item of the partition", []map[string]any{rec("INSERT", "ORG#acme#EVENT#msg_1", "DELIVERY#ep_1")}, nil},
		{"another item", []map[string]any{rec("INSERT", "ORG#acme", "ORG")}, nil},
		{"not an org key", []map[string]any{rec("INSERT", "TOKEN#abc#EVENT#x", "EVENT")}, nil},
		{"no organization", []map[string]any{rec("INSERT", "ORG##EVENT#msg_1", "EVENT")}, nil},
		{"keys of another type", []map[string]any{{"eventName": "INSERT", "dynamodb": map[string]any{"Keys": map[string]any{
			"PK": map[string]string{"N": "1"}, "SK": map[string]string{"S": "EVENT"},
		}}}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw, _ := json.Marshal(map[string]any{"Records": c.records})
			var ev events.DynamoDBEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(webhooks.StreamOrgs(ev), c.want); d != "" {
				t.Errorf("(-got +want):\n%s", d)
			}
		})
	}
}
