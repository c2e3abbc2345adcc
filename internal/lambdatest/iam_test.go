package lambdatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"

	"github.com/mainguard/mainguard/internal/samtemplate"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// tableIAM stands between the functions and DynamoDB Local as IAM stands
// before DynamoDB: each function gets an endpoint of its own (outside AWS
// its requests are signed with DynamoDB Local's key, not its own), where
// each request is authorized against the function's policy statements (the
// template's Table and RateLimit statements), and one they do not allow
// gets DynamoDB's AccessDeniedException, as deployed. A transaction is
// authorized per item, as AWS does: Put as PutItem, Update as UpdateItem,
// Delete as DeleteItem, ConditionCheck as ConditionCheckItem. A statement
// with a dynamodb:Attributes condition allows only requests whose key,
// item, update and condition attributes are all in its list.
type tableIAM struct {
	mu     sync.Mutex
	denied []string
	calls  map[string]map[string]bool // function → the actions it used
}

// grant is one action a statement allows; attrs, when not nil, is its
// ForAllValues:StringEquals dynamodb:Attributes list.
type grant struct {
	action string
	attrs  []string
}

func newTableIAM() *tableIAM { return &tableIAM{calls: map[string]map[string]bool{}} }

// endpoint is the DynamoDB endpoint of the function name, allowed what
// fn's policy statements on the table allow.
func (g *tableIAM) endpoint(t *testing.T, name string, fn *serverless.Function) string {
	t.Helper()
	target, err := url.Parse(storetest.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	grants := grantsOf(fn)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if action, ok := g.allowed(name, grants, r, body); !ok {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"__type":"com.amazon.coral.service#AccessDeniedException","message":"User is not authorized to perform: %s on resource: table because no identity-based policy allows the %s action"}`, action, action)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// grantsOf reads what fn's policy statements allow on the table.
func grantsOf(fn *serverless.Function) []grant {
	var gs []grant
	if fn.Policies == nil || fn.Policies.IAMPolicyDocumentArray == nil {
		return nil
	}
	for _, doc := range *fn.Policies.IAMPolicyDocumentArray {
		for _, raw := range doc.Statement {
			st, _ := raw.(map[string]any)
			var attrs []string
			if c, ok := st["Condition"].(map[string]any); ok {
				m, _ := c["ForAllValues:StringEquals"].(map[string]any)
				attrs = samtemplate.PolicyStrings(m["dynamodb:Attributes"])
				if attrs == nil {
					attrs = []string{} // a condition we do not know allows nothing
				}
			}
			for _, a := range samtemplate.PolicyStrings(st["Action"]) {
				if strings.HasPrefix(a, "dynamodb:") {
					gs = append(gs, grant{a, attrs})
				}
			}
		}
	}
	return gs
}

// allowed authorizes one request of the function name: every action it
// needs must be allowed.
func (g *tableIAM) allowed(name string, grants []grant, r *http.Request, body []byte) (string, bool) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, need := range needs(op, body) {
		if g.calls[name] == nil {
			g.calls[name] = map[string]bool{}
		}
		g.calls[name][need.action] = true
		ok := slices.ContainsFunc(grants, func(gr grant) bool {
			return gr.action == need.action && (gr.attrs == nil || subset(need.attrs, gr.attrs))
		})
		if !ok {
			g.denied = append(g.denied, fmt.Sprintf("%s: %s of %v", name, need.action, need.attrs))
			return need.action, false
		}
	}
	return "", true
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// write is the part of a request (or of a transaction's item) IAM looks at.
type write struct {
	Key                      map[string]json.RawMessage
	Item                     map[string]json.RawMessage
	UpdateExpression         string
	ConditionExpression      string
	ExpressionAttributeNames map[string]string
}

// needs are the actions (each with the attributes it touches) that op
// needs.
func needs(op string, body []byte) []grant {
	switch op {
	case "TransactWriteItems":
		var in struct {
			TransactItems []struct{ Put, Update, Delete, ConditionCheck *write }
		}
		json.Unmarshal(body, &in)
		var out []grant
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				out = append(out, grant{"dynamodb:PutItem", it.Put.attributes()})
			case it.Update != nil:
				out = append(out, grant{"dynamodb:UpdateItem", it.Update.attributes()})
			case it.Delete != nil:
				out = append(out, grant{"dynamodb:DeleteItem", it.Delete.attributes()})
			case it.ConditionCheck != nil:
				out = append(out, grant{"dynamodb:ConditionCheckItem", it.ConditionCheck.attributes()})
			}
		}
		return out
	case "TransactGetItems":
		return []grant{{action: "dynamodb:GetItem"}}
	}
	var w write
	json.Unmarshal(body, &w)
	return []grant{{"dynamodb:" + op, w.attributes()}}
}

var (
	exprName = regexp.MustCompile(`[:#]?[A-Za-z_][A-Za-z0-9_]*`)
	keywords = map[string]bool{"SET": true, "ADD": true, "REMOVE": true, "DELETE": true, "AND": true, "OR": true, "NOT": true,
		"BETWEEN": true, "IN": true, "attribute_exists": true, "attribute_not_exists": true, "attribute_type": true,
		"begins_with": true, "contains": true, "size": true, "if_not_exists": true, "list_append": true}
)

// attributes are the top-level attributes a write names: its key and
// item, and those its update and condition expressions refer to.
func (w *write) attributes() []string {
	set := map[string]bool{}
	for k := range w.Key {
		set[k] = true
	}
	for k := range w.Item {
		set[k] = true
	}
	for _, e := range []string{w.UpdateExpression, w.ConditionExpression} {
		for _, tok := range exprName.FindAllString(e, -1) {
			switch {
			case strings.HasPrefix(tok, ":") || keywords[tok]:
			case strings.HasPrefix(tok, "#"):
				set[w.ExpressionAttributeNames[tok]] = true
			default:
				set[tok] = true
			}
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for k := range set {
			if !yield(k) {
				return
			}
		}
	})
}

// TestTableIAM: the stand-in refuses what a reader's statements do not
// allow (a put, a transaction, an update of another item's attributes) and
// passes what they do (a read, the rate limit's update), as IAM would.
func TestTableIAM(t *testing.T) {
	t.Parallel()
	g := newTableIAM()
	_, table := storetest.NewTable(t)
	reader := &serverless.Function{Policies: &serverless.Function_Policies{IAMPolicyDocumentArray: &[]serverless.Function_IAMPolicyDocument{{
		Statement: []any{
			map[string]any{"Sid": "Table", "Effect": "Allow", "Action": []any{"dynamodb:GetItem", "dynamodb:Query"}},
			map[string]any{"Sid": "RateLimit", "Effect": "Allow", "Action": "dynamodb:UpdateItem",
				"Condition": map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:Attributes": []any{"PK", "SK", "full_at", "ttl"}}}},
		},
	}}}}
	db := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(g.endpoint(t, "reader", reader)),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
	ctx := context.Background()
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "ORG#acme"}, "SK": &types.AttributeValueMemberS{Value: "RATE"}}
	denied := func(what string, err error) {
		t.Helper()
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "AccessDeniedException" {
			t.Errorf("%s: %v, want AccessDeniedException", what, err)
		}
	}
	ok := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &table, Key: key,
		UpdateExpression: aws.String("SET full_at = :v, #ttl = :v"), ExpressionAttributeNames: map[string]string{"#ttl": "ttl"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: "1"}}})
	ok("the rate limit's update", err)
	_, err = db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key})
	ok("a read", err)
	_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &table, Key: key,
		UpdateExpression: aws.String("SET paused = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberBOOL{Value: true}}})
	denied("an update of another attribute", err)
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: key})
	denied("a put", err)
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Delete: &types.Delete{TableName: &table, Key: key}}}})
	denied("a transaction's delete", err)
}
