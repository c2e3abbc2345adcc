package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
)

// Which organization a GitHub repository belongs to, and what a signed-out
// web session leaves behind. Keys:
//
//	claim         PK=GHREPO#{owner/name, lower}   SK=OWNER     org, repo, claimed_at
//	installation  PK=GHINSTALL#{installation id}  SK=INSTALL   org, id
//	              GSI1PK=ORG#{org}#INSTALLS       GSI1SK={id, 20 digits}
//	revoked       PK=SESSION#{session id}         SK=REVOKED   ttl: the session's expiry
//
// The claim and installation items are not under ORG#: a GitHub webhook,
// and a request naming a repository, know the repository, not its
// organization. A claim is keyed by owner and name alone, as the queues'
// repository index is: a deployment's merge queues run on its one GitHub
// (github.com or its Enterprise host). Each item is under 200 bytes: a
// GetItem is 1 read unit (strongly consistent), a write 1 write unit, 2
// in the transactions below (each action of a transaction costs double).

const (
	skOwner   = "OWNER"
	skInstall = "INSTALL"
)

func claimKey(owner, name string) map[string]types.AttributeValue {
	return key("GHREPO#"+strings.ToLower(owner)+"/"+strings.ToLower(name), skOwner)
}

func installKey(id int64) map[string]types.AttributeValue {
	return key("GHINSTALL#"+strconv.FormatInt(id, 10), skInstall)
}

func installsGSI1PK(org string) string { return orgPK(org) + "#INSTALLS" }

// RepoClaim is an administrator's word that a GitHub repository belongs
// to an organization.
type RepoClaim struct {
	Org       string    `dynamodbav:"org"`
	Repo      string    `dynamodbav:"repo"` // owner/name as claimed
	ClaimedAt time.Time `dynamodbav:"claimed_at"`
}

// ClaimRepo records that the GitHub repository owner/name belongs to org:
// a transaction of a check that the organization exists and a put that
// holds while no other organization has claimed it (force: whatever
// claimed it before), 4 write units. NotFound when org does not exist;
// Conflict, naming the holder, when another organization holds it.
func (s *Store) ClaimRepo(ctx context.Context, org, owner, name string, force bool) (RepoClaim, error) {
	c := RepoClaim{Org: org, Repo: owner + "/" + name, ClaimedAt: s.now().UTC()}
	item, err := marshal(c, claimKey(owner, name))
	if err != nil {
		return RepoClaim{}, err
	}
	err = s.putOrgs(ctx, org, item, force, func() (string, error) {
		holder, _, err := s.RepoClaimOf(ctx, owner, name)
		return holder.Org, err
	}, "repository %s/%s", owner, name)
	return c, err
}

// putOrgs puts item, a record that something (named by what and args)
// belongs to org, in a transaction with a check that org exists: NotFound
// when it does not; unless force, Conflict naming the organization
// holder reads when the record exists for another.
func (s *Store) putOrgs(ctx context.Context, org string, item map[string]types.AttributeValue, force bool, holder func() (string, error), what string, args ...any) error {
	put := &types.Put{Item: item}
	if !force {
		put.ConditionExpression = aws.String(ifItemAbsent + " OR " + attrOrg + " = :org")
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":org": str(org)}
	}
	err := s.transact(ctx,
		types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: orgKey(org), ConditionExpression: aws.String(ifItemExists)}},
		types.TransactWriteItem{Put: put},
	)
	switch {
	case failedAction(err, 0):
		return errs.Wrap(errs.NotFound, err, "organization %q not found", org)
	case failedAction(err, 1):
		other, herr := holder()
		if herr != nil {
			return herr
		}
		return errs.Wrap(errs.Conflict, err, "%s belongs to organization %q (--force moves it)", fmt.Sprintf(what, args...), other)
	}
	return err
}

// RepoClaimOf reads the claim on owner/name: one GetItem; false when no
// organization claimed it.
func (s *Store) RepoClaimOf(ctx context.Context, owner, name string) (RepoClaim, bool, error) {
	var c RepoClaim
	err := s.getInto(ctx, claimKey(owner, name), &c, "no claim")
	if errs.Is(err, errs.NotFound) {
		return RepoClaim{}, false, nil
	}
	return c, err == nil, err
}

// ReleaseRepo withdraws org's claim on owner/name: NotFound when org holds
// none.
func (s *Store) ReleaseRepo(ctx context.Context, org, owner, name string) error {
	err := s.transact(ctx, types.TransactWriteItem{Delete: &types.Delete{
		Key: claimKey(owner, name), ConditionExpression: aws.String(attrOrg + " = :org"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":org": str(org)},
	}})
	if errs.Is(err, errs.Conflict) {
		return errs.Wrap(errs.NotFound, err, "organization %q holds no claim on %s/%s", org, owner, name)
	}
	return err
}

// Installation records that a GitHub App installation belongs to an
// organization: every repository it covers is the organization's.
type Installation struct {
	Org       string    `dynamodbav:"org"`
	ID        int64     `dynamodbav:"installation_id"`
	Account   string    `dynamodbav:"account,omitempty"` // the GitHub account it is installed on, when known
	CreatedAt time.Time `dynamodbav:"created_at"`
}

// AddInstallation records installation id for org, as ClaimRepo claims a
// repository (4 write units): NotFound when org does not exist, Conflict,
// naming the holder, when another organization recorded it (unless
// force).
func (s *Store) AddInstallation(ctx context.Context, org string, id int64, account string, force bool) (Installation, error) {
	if id <= 0 {
		return Installation{}, errs.E(errs.Invalid, "an installation id is a positive integer, got %d", id)
	}
	in := Installation{Org: org, ID: id, Account: account, CreatedAt: s.now().UTC()}
	item, err := marshal(in, installKey(id))
	if err != nil {
		return Installation{}, err
	}
	item[AttrGSI1PK], item[AttrGSI1SK] = str(installsGSI1PK(org)), str(fmtID(id))
	err = s.putOrgs(ctx, org, item, force, func() (string, error) {
		holder, _, err := s.InstallationOf(ctx, id)
		return holder.Org, err
	}, "installation %d", id)
	return in, err
}

// fmtID is id in 20 digits, so that ids sort as numbers.
func fmtID(id int64) string { return fmt.Sprintf("%020d", id) }

// InstallationOf reads who recorded installation id: one GetItem; false
// when no organization did.
func (s *Store) InstallationOf(ctx context.Context, id int64) (Installation, bool, error) {
	var in Installation
	err := s.getInto(ctx, installKey(id), &in, "no installation")
	if errs.Is(err, errs.NotFound) {
		return Installation{}, false, nil
	}
	return in, err == nil, err
}

// RemoveInstallation forgets installation id of org: NotFound when org
// did not record it.
func (s *Store) RemoveInstallation(ctx context.Context, org string, id int64) error {
	err := s.transact(ctx, types.TransactWriteItem{Delete: &types.Delete{
		Key: installKey(id), ConditionExpression: aws.String(attrOrg + " = :org"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":org": str(org)},
	}})
	if errs.Is(err, errs.Conflict) {
		return errs.Wrap(errs.NotFound, err, "organization %q has no installation %d", org, id)
	}
	return err
}

// Installations lists org's installations: one Query of GSI1.
func (s *Store) Installations(ctx context.Context, org string) ([]Installation, error) {
	var out []Installation
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexGSI1),
		KeyConditionExpression:    aws.String(gsi1PKIs),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(installsGSI1PK(org))},
	}, func(item map[string]types.AttributeValue) error {
		var in Installation
		if err := unmarshal(item, &in); err != nil {
			return err
		}
		out = append(out, in)
		return nil
	})
	return out, err
}

func sessionKey(id string) map[string]types.AttributeValue {
	return key("SESSION#"+id, "REVOKED")
}

// RevokeSession records that the web session id ended before its expiry
// (signed out): one PutItem, 1 write unit, kept until the session would
// have expired (its ttl), after which its cookie is refused anyway.
func (s *Store) RevokeSession(ctx context.Context, id string, expires time.Time) error {
	item := sessionKey(id)
	item[AttrTTL] = num64(expires.Unix() + 1)
	return s.putItem(ctx, &dynamodb.PutItemInput{Item: item})
}

// SessionRevoked reports whether the web session id was revoked: one
// GetItem, 1 read unit.
func (s *Store) SessionRevoked(ctx context.Context, id string) (bool, error) {
	item, err := s.getItem(ctx, sessionKey(id))
	return item != nil, err
}
