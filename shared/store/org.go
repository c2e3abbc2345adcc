package store

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"math/big"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/access"
	"github.com/mainguard/mainguard/shared/errs"
)

// Org is an organization: the tenant every other item belongs to.
type Org struct {
	Slug      string    `dynamodbav:"slug"`
	Name      string    `dynamodbav:"name"`
	CreatedAt time.Time `dynamodbav:"created_at"`
	// EnumCase is how the merge-queue answers spell enum values for this
	// organization ("lower" or "upper"); "" follows the deployment's
	// ENUM_CASE.
	EnumCase string `dynamodbav:"enum_case,omitempty"`
}

// Token is an API token's record. The token itself is never stored.
type Token struct {
	ID        string     `dynamodbav:"token_id"`
	Org       string     `dynamodbav:"org"`
	Hash      string     `dynamodbav:"hash"`
	CreatedAt time.Time  `dynamodbav:"created_at"`
	RevokedAt *time.Time `dynamodbav:"revoked_at,omitempty"`
	// Scopes are what the token may do (upload, read, queue, admin; package
	// api says which endpoint needs which). None: a token made before
	// scopes existed, which keeps every right it had.
	Scopes []string `dynamodbav:"scopes,omitempty"`
}

// Revoked reports whether the token was revoked.
func (t Token) Revoked() bool { return t.RevokedAt != nil && !t.RevokedAt.IsZero() }

// ValidSlug reports whether slug can name an organization: lowercase
// letters, digits, '-' and '_', up to 63 characters, not starting with '-'
// or '_', as URL slugs go.
func ValidSlug(slug string) bool {
	return len(slug) >= 1 && len(slug) <= 63 && slug[0] != '-' && slug[0] != '_' &&
		onlyBytes(slug, func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' })
}

// onlyBytes reports whether every byte of s is one ok accepts. (A regular
// expression with a counted repetition, like [a-z]{0,62}, compiles to a
// program as long as the count, at every function's start.)
func onlyBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// CreateOrg creates an organization; Conflict when the slug is taken.
func (s *Store) CreateOrg(ctx context.Context, slug, name string) (Org, error) {
	if !ValidSlug(slug) {
		return Org{}, errs.E(errs.Invalid, "slug must be 1 to 63 lowercase letters, digits, '-' or '_', starting with a letter or digit")
	}
	if name == "" {
		name = slug
	}
	o := Org{Slug: slug, Name: name, CreatedAt: s.now().UTC()}
	item, err := marshal(o, orgKey(slug))
	if err != nil {
		return Org{}, err
	}
	// Every organization is listed under one index key, for the scheduled
	// function's walk over tenants.
	item[AttrGSI1PK], item[AttrGSI1SK] = str(orgsGSI1PK), str(slug)
	err = s.putItem(ctx, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String(ifItemAbsent)})
	if errs.Is(err, errs.Conflict) {
		return Org{}, errs.Wrap(errs.Conflict, err, "organization %q already exists", slug)
	}
	return o, err
}

const orgsGSI1PK = "ORGS"

// ListOrgs lists the slugs of every organization: one Query per 1 MB.
func (s *Store) ListOrgs(ctx context.Context) ([]string, error) {
	var out []string
	var start map[string]types.AttributeValue
	for {
		page, err := s.query(ctx, &dynamodb.QueryInput{
			IndexName:                 aws.String(IndexGSI1),
			KeyConditionExpression:    aws.String(gsi1PKIs),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(orgsGSI1PK)},
			ProjectionExpression:      aws.String(AttrGSI1SK),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, err
		}
		for _, item := range page.Items {
			out = append(out, item[AttrGSI1SK].(*types.AttributeValueMemberS).Value)
		}
		if start = page.LastEvaluatedKey; start == nil {
			return out, nil
		}
	}
}

// GetOrg reads an organization; NotFound when absent.
func (s *Store) GetOrg(ctx context.Context, slug string) (Org, error) {
	var o Org
	err := s.getInto(ctx, orgKey(slug), &o, "organization %q not found", slug)
	return o, err
}

// SetOrgEnumCase sets how merge-queue answers spell enum values for org:
// "lower", "upper", or "" for the deployment's default. NotFound when the
// organization does not exist.
func (s *Store) SetOrgEnumCase(ctx context.Context, slug, enumCase string) error {
	in := &dynamodb.UpdateItemInput{
		Key:                 orgKey(slug),
		ConditionExpression: aws.String(ifItemExists),
		UpdateExpression:    aws.String("REMOVE " + attrEnumCase),
	}
	if enumCase != "" {
		in.UpdateExpression = aws.String("SET " + attrEnumCase + " = :c")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":c": str(enumCase)}
	}
	_, err := s.updateItem(ctx, in)
	if errs.Is(err, errs.Conflict) {
		return errs.E(errs.NotFound, "organization %q not found", slug)
	}
	return err
}

// base62 is the alphabet of the token body: URL- and shell-safe.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewTokenSecret returns a fresh token: "mg_" and the base62 form of 32
// random bytes.
func NewTokenSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on Linux; nothing sane to do
	}
	n := new(big.Int).SetBytes(b[:])
	out := make([]byte, 0, 44)
	base := big.NewInt(62)
	mod := new(big.Int)
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append(out, base62[mod.Int64()])
	}
	for len(out) < 43 { // 62^43 > 2^256: fixed width
		out = append(out, '0')
	}
	return "mg_" + string(out)
}

// HashToken is the stored form of a token (access.HashToken).
func HashToken(token string) string { return access.HashToken(token) }

// tokenID is the public handle of a token for listing and revoking: a
// prefix of its hash, which tells nothing about the token itself.
func tokenID(hash string) string { return "tok_" + hash[:12] }

// AdminScope is the scope of every right (package api names them all).
const AdminScope = "admin"

// CreateToken issues a new token for org with every right (the admin
// scope) and returns it; it is shown once and only its hash is kept.
// NotFound when the organization does not exist.
func (s *Store) CreateToken(ctx context.Context, org string) (secret string, tok Token, err error) {
	return s.CreateScopedToken(ctx, org, []string{AdminScope})
}

// CreateScopedToken is CreateToken for a token that may do what scopes
// say (the caller checks their names).
func (s *Store) CreateScopedToken(ctx context.Context, org string, scopes []string) (secret string, tok Token, err error) {
	secret = NewTokenSecret()
	tok, err = s.addToken(ctx, org, secret, scopes)
	return secret, tok, err
}

// AddToken stores the hash of a token chosen by the caller (the local
// server's MAINGUARD_BOOTSTRAP_TOKEN), with every right. Adding a token
// that exists for the same organization succeeds and returns it; for
// another one, Conflict.
func (s *Store) AddToken(ctx context.Context, org, secret string) (Token, error) {
	return s.addToken(ctx, org, secret, []string{AdminScope})
}

func (s *Store) addToken(ctx context.Context, org, secret string, scopes []string) (Token, error) {
	hash := HashToken(secret)
	tok := Token{ID: tokenID(hash), Org: org, Hash: hash, CreatedAt: s.now().UTC(), Scopes: scopes}
	item, err := marshal(tok, tokenKey(hash))
	if err != nil {
		return Token{}, err
	}
	item[AttrGSI1PK], item[AttrGSI1SK] = str(tokensGSI1PK(org)), str(tok.ID)
	err = s.transact(ctx,
		types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			Key: orgKey(org), ConditionExpression: aws.String(ifItemExists),
		}},
		types.TransactWriteItem{Put: &types.Put{
			Item: item, ConditionExpression: aws.String(ifItemAbsent),
		}},
	)
	if failedAction(err, 0) {
		return Token{}, errs.Wrap(errs.NotFound, err, "organization %q not found", org)
	}
	if failedAction(err, 1) {
		existing, lerr := s.lookupToken(ctx, hash)
		if lerr == nil && existing.Org == org && !existing.Revoked() {
			return existing, nil
		}
		return Token{}, errs.Wrap(errs.Conflict, err, "this token cannot be used for organization %q", org)
	}
	return tok, err
}

// Authenticate returns the record of a valid token. Unknown and revoked
// tokens are Unauthorized, with the same message.
func (s *Store) Authenticate(ctx context.Context, secret string) (Token, error) {
	return s.AuthenticateHash(ctx, HashToken(secret))
}

// AuthenticateHash is Authenticate by the token's hash (HashToken): what
// a signed-in web session keeps, so that a revoked token ends its sessions
// too.
func (s *Store) AuthenticateHash(ctx context.Context, hash string) (Token, error) {
	tok, err := s.lookupToken(ctx, hash)
	if errs.Is(err, errs.NotFound) {
		return Token{}, errs.E(errs.Unauthorized, "the API token is not valid")
	}
	if err != nil {
		return Token{}, err
	}
	// The lookup was by hash already; comparing in constant time as well
	// keeps the check honest should the key ever become a prefix.
	if subtle.ConstantTimeCompare([]byte(tok.Hash), []byte(hash)) != 1 || tok.Revoked() {
		return Token{}, errs.E(errs.Unauthorized, "the API token is not valid")
	}
	return tok, nil
}

// Grant is the organization and scopes of the valid token whose hash is
// hash (AuthenticateHash): what package api keeps of a token.
func (s *Store) Grant(ctx context.Context, hash string) (org string, scopes []string, err error) {
	tok, err := s.AuthenticateHash(ctx, hash)
	return tok.Org, tok.Scopes, err
}

func (s *Store) lookupToken(ctx context.Context, hash string) (Token, error) {
	var t Token
	err := s.getInto(ctx, tokenKey(hash), &t, "token not found")
	return t, err
}

// ListTokens lists an organization's tokens, revoked ones included.
func (s *Store) ListTokens(ctx context.Context, org string) ([]Token, error) {
	var out []Token
	var start map[string]types.AttributeValue
	for {
		page, err := s.query(ctx, &dynamodb.QueryInput{
			IndexName:                 aws.String(IndexGSI1),
			KeyConditionExpression:    aws.String(gsi1PKIs),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(tokensGSI1PK(org))},
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, err
		}
		var toks []Token
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &toks); err != nil {
			return nil, errs.Wrap(errs.Internal, err, "store failure")
		}
		out = append(out, toks...)
		if start = page.LastEvaluatedKey; start == nil {
			return out, nil
		}
	}
}

// RevokeToken revokes the token of org with the given id (tok_…) or secret
// (mg_…). NotFound when org has no such token.
func (s *Store) RevokeToken(ctx context.Context, org, idOrSecret string) (Token, error) {
	hash := ""
	if len(idOrSecret) > 3 && idOrSecret[:3] == "mg_" {
		hash = HashToken(idOrSecret)
	} else {
		toks, err := s.ListTokens(ctx, org)
		if err != nil {
			return Token{}, err
		}
		for _, t := range toks {
			if t.ID == idOrSecret {
				hash = t.Hash
			}
		}
		if hash == "" {
			return Token{}, errs.E(errs.NotFound, "organization %q has no token %s", org, idOrSecret)
		}
	}
	now := s.now().UTC()
	attrs, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       tokenKey(hash),
		UpdateExpression:          aws.String("SET " + attrRevokedAt + " = if_not_exists(" + attrRevokedAt + ", :now)"),
		ConditionExpression:       aws.String(ifItemExists + " AND " + attrOrg + " = :org"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": str(now.Format(time.RFC3339Nano)), ":org": str(org)},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if errs.Is(err, errs.Conflict) {
		return Token{}, errs.Wrap(errs.NotFound, err, "organization %q has no such token", org)
	}
	if err != nil {
		return Token{}, err
	}
	var t Token
	err = unmarshal(attrs, &t)
	return t, err
}
