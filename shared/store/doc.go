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
//	| repo + test (quarantine flag)   | BatchGetItem          | the repository item and the test item                 |
//	| record an upload's runs         | TransactWriteItems    | per test: run items (new) + ADD to the aggregate      |
//	|                                 |                       | + its commit item, ≤100 actions                       |
//	| run history of a test           | Query, desc           | PK=…#TEST#{id}, SK begins_with RUN#                   |
//	| failed and passed on a commit?  | BatchGetItem          | PK=…#TEST#{id}, SK=SHA#{sha}, ttl 16 days             |
//	| health write (+ its events)     | TransactWriteItems    | the test item (rev = read rev), its index entry       |
//	|                                 |                       | (PK=…#TEST#{id}, SK=INDEX) + new event items          |
//	| unhealthy tests of a repo       | Query GSI1 + BatchGet | GSI1PK=ORG#{slug}#REPO#{repo}#STATUS#FLAKY|BROKEN     |
//	|                                 |                       | on index entries, then the page's test items          |
//	| quarantine candidates of a repo | Query GSI2 + BatchGet | GSI2PK=ORG#{slug}#REPO#{repo}#QUARANTINE, SK A#/U#{id}|
//	| failed runs in a time range     | Query GSI1 per day    | GSI1PK=ORG#{slug}#REPO#{repo}#FAILS#{unix day}        |
//	| newest CODEOWNERS of a repo     | GetItem / PutItem     | PK=ORG#{slug}, SK=REPO#{repo}#CODEOWNERS (newer wins) |
//	| upload record                   | GetItem / UpdateItem  | PK=ORG#{slug}#UPLOAD#{id}, SK=UPLOAD, ttl 35 days     |
//	| recent uploads of an org        | Query GSI1, desc      | GSI1PK=ORG#{slug}#UPLOADS                             |
//	| failed uploads of a test branch | Query GSI2            | GSI2PK=ORG#{slug}#REPO#{repo}#SHA#{sha}, SK ≥ time    |
//	| organizations (scheduler walk)  | Query GSI1            | GSI1PK=ORGS                                           |
//	| repositories of an org          | Query                 | PK=ORG#{slug}, SK begins_with REPO#                   |
//	| deployment secret               | GetItem / PutItem     | PK=SECRET#{name}, SK=SECRET (created once)            |
//	| outbox event                    | PutItem in a tx       | PK=ORG#{slug}#EVENT#{id}, SK=EVENT, ttl 30 days       |
//	| pending events of an org        | Query GSI1            | GSI1PK=ORG#{slug}#OUTBOX, GSI1SK={time}#{id}          |
//	| health check                    | GetItem               | PK=HEALTH, SK=HEALTH                                  |
//
// What each call costs, by AWS's billing rules, package billing computes
// (BenchmarkCost in package healthsvc measures it per test per upload).
//
// The merge queue's items are listed in queue.go's header comment, the
// webhook endpoints', deliveries' and attempt log's in webhook.go's.
//
// A test's aggregate keeps its counters as top-level attributes
// ("hp.{hour}", "cc.{cluster}.{day}", ...: testcase.go) rather than maps,
// because DynamoDB's ADD creates a missing top-level attribute, and the
// item itself, in one atomic update, while a map entry can only be set once
// its map exists: concurrent ingests count into one test without a read and
// without losing a run. A health write removes the counters that
// testhealth.Prune dropped.
//
// Repository keys are canonical: the host in lowercase, and on github.com
// the owner and name too (GitHub ignores their case); the item keeps the
// spelling first seen, which responses echo.
package store
