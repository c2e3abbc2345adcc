package store

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Repo is a repository's record and settings.
type Repo struct {
	Org string         `dynamodbav:"org"`
	Ref repository.Ref `dynamodbav:"ref"` // the spelling the repository was first seen with
	// Ticketing: at most one tracker builds ticket URLs.
	JiraBaseURL     string    `dynamodbav:"jira_base_url,omitempty"`
	LinearWorkspace string    `dynamodbav:"linear_workspace,omitempty"`
	DefaultBranch   string    `dynamodbav:"default_branch,omitempty"`
	CreatedAt       time.Time `dynamodbav:"created_at"`
	// The health settings are stored as top-level attributes (the struct is
	// embedded), so that each can be set on its own.
	testhealth.HealthSettings
	// CodeownersAt is the upload time of the CODEOWNERS in use.
	CodeownersAt time.Time `dynamodbav:"codeowners_at,omitempty"`
}

// Branch is the repository's default branch, "main" unless set.
func (r Repo) Branch() string {
	if r.DefaultBranch == "" {
		return "main"
	}
	return r.DefaultBranch
}

// Settings are the repository's monitor and quarantine settings with
// every default applied: the one place they are computed from its record.
func (r Repo) Settings() testhealth.Settings {
	return testhealth.SettingsOf(r.HealthSettings, r.Branch())
}

// GetRepo reads a repository of org; NotFound when absent.
func (s *Store) GetRepo(ctx context.Context, org string, ref repository.Ref) (Repo, error) {
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
	Health testhealth.HealthSettings
}

// UpdateRepo creates the repository when missing (first use) and applies
// settings: each SET replaces one attribute, and created_at and ref keep
// their first value, so concurrent updates of different settings both hold.
func (s *Store) UpdateRepo(ctx context.Context, org string, ref repository.Ref, set RepoSettings) (Repo, error) {
	up := expression.Set(expression.Name(attrOrg), expression.Value(org)).
		Set(expression.Name(attrRef), expression.IfNotExists(expression.Name(attrRef), expression.Value(ref))).
		Set(expression.Name(attrCreatedAt), expression.IfNotExists(expression.Name(attrCreatedAt), expression.Value(s.now().UTC().Format(time.RFC3339Nano))))
	var removes []string
	for attr, v := range map[string]*string{attrJiraBaseURL: set.JiraBaseURL, attrLinearWorkspace: set.LinearWorkspace, attrDefaultBranch: set.DefaultBranch} {
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
			Key: orgKey(org), ConditionExpression: aws.String(ifItemExists),
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

func codeownersKey(org string, ref repository.Ref) map[string]types.AttributeValue {
	return key(orgPK(org), "REPO#"+ref.Key()+"#CODEOWNERS")
}

// PutCodeowners keeps c as the repository's CODEOWNERS unless a newer one
// is stored: uploads may land out of order, and the newest file wins.
func (s *Store) PutCodeowners(ctx context.Context, org string, ref repository.Ref, c Codeowners) error {
	if len(c.Text) > MaxCodeownersBytes {
		return errs.E(errs.Invalid, "CODEOWNERS is larger than %d bytes", MaxCodeownersBytes)
	}
	item, err := marshal(c, codeownersKey(org, ref))
	if err != nil {
		return err
	}
	err = s.putItem(ctx, &dynamodb.PutItemInput{
		Item:                      item,
		ConditionExpression:       aws.String(ifItemAbsent + " OR #at <= :at"),
		ExpressionAttributeNames:  map[string]string{"#at": attrAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": item[attrAt]},
	})
	if errs.Is(err, errs.Conflict) {
		return nil // a newer file is in place
	}
	return err
}

// GetCodeowners reads the repository's CODEOWNERS; a zero value when none
// was ever uploaded.
func (s *Store) GetCodeowners(ctx context.Context, org string, ref repository.Ref) (Codeowners, error) {
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
			KeyConditionExpression: aws.String(pkIs + " AND begins_with(" + AttrSK + ", :repo)"),
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
