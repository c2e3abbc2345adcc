package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
)

// RepoRef names a repository as clients do: {host, owner, name}.
type RepoRef struct {
	Host  string `json:"host" dynamodbav:"host"`
	Owner string `json:"owner" dynamodbav:"owner"`
	Name  string `json:"name" dynamodbav:"name"`
}

// Key is the canonical form used in keys. The host is case-insensitive
// everywhere; on github.com owner and name are too (GitHub treats them so),
// while other hosts (GitLab, self-hosted) may be case-sensitive.
func (r RepoRef) Key() string {
	host := strings.ToLower(r.Host)
	owner, name := r.Owner, r.Name
	if host == "github.com" {
		owner, name = strings.ToLower(owner), strings.ToLower(name)
	}
	return host + "/" + owner + "/" + name
}

// String is host/owner/name as spelled.
func (r RepoRef) String() string { return r.Host + "/" + r.Owner + "/" + r.Name }

// HTMLURL is the repository's web address.
func (r RepoRef) HTMLURL() string { return fmt.Sprintf("https://%s/%s/%s", r.Host, r.Owner, r.Name) }

// ParseRepo reads "host/owner/name"; owner may hold slashes (GitLab groups).
func ParseRepo(s string) (RepoRef, error) {
	first := strings.Index(s, "/")
	last := strings.LastIndex(s, "/")
	if first <= 0 || last <= first+1 || last == len(s)-1 {
		return RepoRef{}, errs.E(errs.Invalid, "repository must be HOST/OWNER/NAME, got %q", s)
	}
	return RepoRef{Host: s[:first], Owner: s[first+1 : last], Name: s[last+1:]}, nil
}

// Repo is a repository's record and settings.
type Repo struct {
	Org string  `dynamodbav:"org"`
	Ref RepoRef `dynamodbav:"ref"` // the spelling the repository was first seen with
	// Ticketing: at most one tracker builds ticket URLs.
	JiraBaseURL     string    `dynamodbav:"jira_base_url,omitempty"`
	LinearWorkspace string    `dynamodbav:"linear_workspace,omitempty"`
	DefaultBranch   string    `dynamodbav:"default_branch,omitempty"`
	CreatedAt       time.Time `dynamodbav:"created_at"`
}

// Branch is the repository's default branch, "main" unless set.
func (r Repo) Branch() string {
	if r.DefaultBranch == "" {
		return "main"
	}
	return r.DefaultBranch
}

// GetRepo reads a repository of org; NotFound when absent.
func (s *Store) GetRepo(ctx context.Context, org string, ref RepoRef) (Repo, error) {
	var r Repo
	err := s.getInto(ctx, repoKey(org, ref), &r, "repository %s not found", ref)
	return r, err
}

// RepoSettings are the settings the administration program can change; nil
// fields stay as they are, "" clears a string.
type RepoSettings struct {
	JiraBaseURL     *string
	LinearWorkspace *string
	DefaultBranch   *string
}

// UpdateRepo creates the repository when missing (first use) and applies
// settings: each SET replaces one attribute, and created_at and ref keep
// their first value, so concurrent updates of different settings both hold.
func (s *Store) UpdateRepo(ctx context.Context, org string, ref RepoRef, set RepoSettings) (Repo, error) {
	up := expression.Set(expression.Name("org"), expression.Value(org)).
		Set(expression.Name("ref"), expression.IfNotExists(expression.Name("ref"), expression.Value(ref))).
		Set(expression.Name("created_at"), expression.IfNotExists(expression.Name("created_at"), expression.Value(s.now().UTC().Format(time.RFC3339Nano))))
	var removes []string
	for attr, v := range map[string]*string{"jira_base_url": set.JiraBaseURL, "linear_workspace": set.LinearWorkspace, "default_branch": set.DefaultBranch} {
		switch {
		case v == nil:
		case *v == "":
			removes = append(removes, attr)
		default:
			up = up.Set(expression.Name(attr), expression.Value(*v))
		}
	}
	for _, attr := range removes {
		up = up.Remove(expression.Name(attr))
	}
	expr, err := expression.NewBuilder().WithUpdate(up).Build()
	if err != nil {
		return Repo{}, errs.Wrap(errs.Internal, err, "store failure")
	}
	// A repository never outlives its tenant: the organization must exist.
	err = s.transact(ctx,
		types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			Key: orgKey(org), ConditionExpression: aws.String("attribute_exists(PK)"),
		}},
		types.TransactWriteItem{Update: &types.Update{
			Key: repoKey(org, ref), UpdateExpression: expr.Update(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		}},
	)
	if errs.Is(err, errs.Conflict) {
		return Repo{}, errs.Wrap(errs.NotFound, err, "organization %q not found", org)
	}
	if err != nil {
		return Repo{}, err
	}
	return s.GetRepo(ctx, org, ref)
}
