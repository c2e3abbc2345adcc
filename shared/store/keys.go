package store

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/mainguard/mainguard/shared/repository"
)

// Key prefixes. Every item of an organization has a partition key that starts
// with ORG#{slug}; the token item is the one exception, because a request
// presents only the token and the token's hash is how we learn the org.
const (
	prefixOrg   = "ORG#"
	prefixToken = "TOKEN#"
	skOrg       = "ORG"
	skToken     = "TOKEN"
	skTest      = "TEST"
	skEvent     = "EVENT"
)

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrPK: str(pk), AttrSK: str(sk)}
}

func orgPK(slug string) string { return prefixOrg + slug }

func orgKey(slug string) map[string]types.AttributeValue { return key(orgPK(slug), skOrg) }

func tokenKey(hash string) map[string]types.AttributeValue { return key(prefixToken+hash, skToken) }

func tokensGSI1PK(slug string) string { return orgPK(slug) + "#TOKENS" }

func repoKey(slug string, r repository.Ref) map[string]types.AttributeValue {
	return key(orgPK(slug), "REPO#"+r.Key())
}

func testPK(slug string, r repository.Ref, id string) string {
	return orgPK(slug) + "#REPO#" + r.Key() + "#TEST#" + strings.ToLower(id)
}

func testKey(slug string, r repository.Ref, id string) map[string]types.AttributeValue {
	return key(testPK(slug, r, id), skTest)
}

// A test's items share its partition and sort under "TEST", so one Query
// reads them all: the counter item (TEST), written by every upload that
// runs the test; its failure item (TEST#FAIL), written when it fails; its
// meta item (TEST#META): identity, owners, health, ticket and the hours
// folded out of the counter item.
const (
	skMeta = skTest + "#META"
	skFail = skTest + "#FAIL"
)

func metaKey(slug string, r repository.Ref, id string) map[string]types.AttributeValue {
	return key(testPK(slug, r, id), skMeta)
}

func failKey(slug string, r repository.Ref, id string) map[string]types.AttributeValue {
	return key(testPK(slug, r, id), skFail)
}

func eventKey(slug, id string) map[string]types.AttributeValue {
	return key(orgPK(slug)+"#EVENT#"+id, skEvent)
}
