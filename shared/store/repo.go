package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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

// ParseRepo reads "host/owner/name": a host name (no scheme, no port), and
// an owner that may hold slashes (GitLab groups) except on github.com,
// where it is one segment; no segment is empty or holds spaces.
func ParseRepo(s string) (RepoRef, error) {
	bad := errs.E(errs.Invalid, "repository must be HOST/OWNER/NAME, got %q", s)
	parts := strings.Split(s, "/")
	if len(parts) < 3 || strings.ContainsAny(s, " \t\n:?#@") {
		return RepoRef{}, bad
	}
	for _, p := range parts {
		if p == "" {
			return RepoRef{}, bad
		}
	}
	host := parts[0]
	if strings.EqualFold(host, "github.com") && len(parts) != 3 {
		return RepoRef{}, bad
	}
	return RepoRef{Host: host, Owner: strings.Join(parts[1:len(parts)-1], "/"), Name: parts[len(parts)-1]}, nil
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
	// HealthSettings are stored as top-level attributes (the struct is
	// embedded), so that each can be set on its own.
	HealthSettings
	// CodeownersAt is the upload time of the CODEOWNERS in use.
	CodeownersAt time.Time `dynamodbav:"codeowners_at,omitempty"`
}

// HealthSettings are a repository's quarantine and monitor settings
// (contract 2.3 and 2.4). A nil field takes the default, which package
// testhealth owns.
type HealthSettings struct {
	QuarantineEnabled *bool `dynamodbav:"quarantine_enabled,omitempty"`
	AutoQuarantine    *bool `dynamodbav:"auto_quarantine,omitempty"`

	PassOnRetry  *bool `dynamodbav:"mon_pass_on_retry,omitempty"`
	RecoveryDays *int  `dynamodbav:"mon_recovery_days,omitempty"`

	FailureRate      *bool    `dynamodbav:"mon_failure_rate,omitempty"`
	WindowHours      *int     `dynamodbav:"mon_window_hours,omitempty"`
	Branches         []string `dynamodbav:"mon_branches,omitempty"`
	MinRuns          *int     `dynamodbav:"mon_min_runs,omitempty"`
	FlakyThreshold   *float64 `dynamodbav:"mon_flaky_threshold,omitempty"`
	BrokenThreshold  *float64 `dynamodbav:"mon_broken_threshold,omitempty"`
	FlakyResolution  *float64 `dynamodbav:"mon_flaky_resolution,omitempty"`
	BrokenResolution *float64 `dynamodbav:"mon_broken_resolution,omitempty"`
	StaleHours       *int     `dynamodbav:"mon_stale_hours,omitempty"`

	InfraGuard *bool `dynamodbav:"mon_infra_guard,omitempty"`

	BrokenStreak *bool `dynamodbav:"mon_broken_streak,omitempty"`
	Streak       *int  `dynamodbav:"mon_streak,omitempty"`
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
	// Health: each non-nil field is set; nil fields stay as they are.
	Health HealthSettings
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
	health, err := attributevalue.MarshalMap(set.Health)
	if err != nil {
		return Repo{}, errs.Wrap(errs.Internal, err, "store failure")
	}
	for attr, v := range health {
		up = up.Set(expression.Name(attr), expression.Value(v))
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

// Codeowners is the newest CODEOWNERS file of a repository.
type Codeowners struct {
	Text string    `dynamodbav:"text"`
	At   time.Time `dynamodbav:"at"` // the upload time of the bundle it came in
}

// MaxCodeownersBytes bounds the stored file, far below the item limit.
const MaxCodeownersBytes = 256 << 10

func codeownersKey(org string, ref RepoRef) map[string]types.AttributeValue {
	return key(orgPK(org), "REPO#"+ref.Key()+"#CODEOWNERS")
}

// PutCodeowners keeps c as the repository's CODEOWNERS unless a newer one
// is stored: uploads may land out of order, and the newest file wins.
func (s *Store) PutCodeowners(ctx context.Context, org string, ref RepoRef, c Codeowners) error {
	if len(c.Text) > MaxCodeownersBytes {
		return errs.E(errs.Invalid, "CODEOWNERS is larger than %d bytes", MaxCodeownersBytes)
	}
	item, err := marshal(c, codeownersKey(org, ref))
	if err != nil {
		return err
	}
	err = s.putItem(ctx, &dynamodb.PutItemInput{
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(PK) OR #at <= :at"),
		ExpressionAttributeNames:  map[string]string{"#at": "at"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": item["at"]},
	})
	if errs.Is(err, errs.Conflict) {
		return nil // a newer file is in place
	}
	return err
}

// GetCodeowners reads the repository's CODEOWNERS; a zero value when none
// was ever uploaded.
func (s *Store) GetCodeowners(ctx context.Context, org string, ref RepoRef) (Codeowners, error) {
	var c Codeowners
	err := s.getInto(ctx, codeownersKey(org, ref), &c, "no CODEOWNERS")
	if errs.Is(err, errs.NotFound) {
		return Codeowners{}, nil
	}
	return c, err
}

// ListRepos lists the repositories of org: one Query per 1 MB.
func (s *Store) ListRepos(ctx context.Context, org string) ([]Repo, error) {
	var out []Repo
	var start map[string]types.AttributeValue
	for {
		page, err := s.query(ctx, &dynamodb.QueryInput{
			KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :repo)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": str(orgPK(org)), ":repo": str("REPO#"),
			},
			ExclusiveStartKey: start,
		})
		if err != nil {
			return nil, err
		}
		for _, item := range page.Items {
			if strings.HasSuffix(item[AttrSK].(*types.AttributeValueMemberS).Value, "#CODEOWNERS") {
				continue
			}
			var r Repo
			if err := unmarshal(item, &r); err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		if start = page.LastEvaluatedKey; start == nil {
			return out, nil
		}
	}
}
