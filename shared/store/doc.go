// Package store owns the DynamoDB single-table model: keys, items, reads and
// conditional writes. It turns SDK errors into domain errors (a failed
// condition is errs.Conflict, also inside a cancelled transaction), so no
// SDK type leaks upward.
//
// One table, generic keys PK/SK, one index GSI1 (GSI1PK/GSI1SK, all
// attributes projected), TTL on the attribute "ttl". Every partition key of
// an organization's data starts with ORG#{slug}; the token item is the one
// exception, because a request presents only its token.
//
// Access patterns (each is one call; none scans):
//
//	| pattern                         | call                  | key                                                   |
//	|---------------------------------|-----------------------|-------------------------------------------------------|
//	| organization by slug            | GetItem               | PK=ORG#{slug}, SK=ORG                                 |
//	| token → organization (auth)     | GetItem               | PK=TOKEN#{sha256 hex}, SK=TOKEN                       |
//	| tokens of an organization       | Query GSI1            | GSI1PK=ORG#{slug}#TOKENS                              |
//	| repository and its settings     | GetItem               | PK=ORG#{slug}, SK=REPO#{host/owner/name, canonical}  |
//	| test case with its aggregates   | GetItem               | PK=ORG#{slug}#REPO#{repo}#TEST#{id}, SK=TEST          |
//	| link a ticket (+ its event)     | TransactWriteItems    | the test item (exists) + a new event item             |
//	| outbox event                    | PutItem in a tx       | PK=ORG#{slug}#EVENT#{id}, SK=EVENT, ttl 30 days       |
//	| pending events of an org        | Query GSI1            | GSI1PK=ORG#{slug}#OUTBOX, GSI1SK={time}#{id}          |
//	| health check                    | GetItem               | PK=HEALTH, SK=HEALTH                                  |
//
// Repository keys are canonical: the host in lowercase, and on github.com
// the owner and name too (GitHub ignores their case); the item keeps the
// spelling first seen, which responses echo.
package store
