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
//	| test case, whole                | Query (1 call)        | PK=ORG#{slug}#REPO#{repo}#TEST#{id}, SK begins_with   |
//	|                                 |                       | TEST: counter (TEST), failure (TEST#FAIL) and meta    |
//	|                                 |                       | (TEST#META) items                                     |
//	| link a ticket (+ its event)     | TransactWriteItems    | counter item exists, meta item SET, new event item    |
//	| repo + test (get-test-details)  | BatchGetItem          | the repository item and the test's three, eventually  |
//	|                                 |                       | consistent for display                                |
//	| count a batch of an upload      | UpdateItem per test   | ADD to the counter item, token-guarded, ALL_OLD back; |
//	|                                 | (+ BatchWriteItem)    | failure item on failure; failed-run items and new     |
//	|                                 |                       | tests' meta items in BatchWriteItems                  |
//	| fold a test's old hours         | GetItem +             | counter item (hours out, day sums in, conditional on  |
//	|                                 | TransactWriteItems    | the hours read) + meta item (SET xh, the packed       |
//	|                                 |                       | folded hours, conditional on the value read), daily   |
//	| pack pull-request failure times | GetItem + UpdateItem  | meta item SET prs (conditional on the value read),    |
//	|                                 | + UpdateItem          | then the failure item's pr.{n} REMOVEd if unchanged   |
//	| batch of an upload done         | PutItem               | PK=…#REPO#{repo}#SHA#{sha}, SK=RUNS#{upload}#{batch}, |
//	|                                 |                       | passed and failed test ids, ttl 16 days               |
//	| batches of a commit             | Query                 | PK=…#SHA#{sha}: resume, pass-on-retry across uploads, |
//	|                                 |                       | and what earlier uploads showed of the tests failing  |
//	|                                 |                       | now (a commit counts once in the broken streak)       |
//	| health write (+ its events)     | TransactWriteItems    | counter item (rev = read rev), meta item, its index   |
//	|                                 |                       | entry (PK=…#TEST#{id}, SK=INDEX) + new event items    |
//	| unhealthy tests of a repo       | Query GSI1 + BatchGet | GSI1PK=ORG#{slug}#REPO#{repo}#STATUS#FLAKY|BROKEN     |
//	|                                 |                       | on index entries, then the page's test items          |
//	| quarantine candidates of a repo | Query GSI2 + BatchGet | GSI2PK=ORG#{slug}#REPO#{repo}#QUARANTINE, SK A#/U#{id}|
//	|                                 |                       | (filtered: an override's end, qu, not passed)         |
//	| failed runs in a time range     | Query per day         | PK=ORG#{slug}#REPO#{repo}#FAILS#{unix day}, SK={time} |
//	|                                 |                       | #{test}#{upload}#{seq}, ttl 35 days (and GSI1, where  |
//	|                                 |                       | the earlier layout indexed its run items)             |
//	| newest CODEOWNERS of a repo     | GetItem / PutItem     | PK=ORG#{slug}, SK=REPO#{repo}#CODEOWNERS (newer wins) |
//	| upload record                   | GetItem / UpdateItem  | PK=ORG#{slug}#UPLOAD#{id}, SK=UPLOAD, ttl 35 days     |
//	| recent uploads of an org        | Query GSI1, desc      | GSI1PK=ORG#{slug}#UPLOADS                             |
//	| unfinished uploads now due      | Query GSI2            | GSI2PK=ORG#{slug}#PENDING_UPLOADS, SK < now (due time |
//	|                                 |                       | #id; a lease moves it on, finishing removes it)       |
//	| claim or renew an ingest lease  | UpdateItem            | the upload item, if CREATED and not held by another   |
//	| failed uploads of a test branch | Query GSI2            | GSI2PK=ORG#{slug}#REPO#{repo}#SHA#{sha}, SK ≥ time    |
//	| organizations (scheduler walk)  | Query GSI1            | GSI1PK=ORGS                                           |
//	| repositories of an org          | Query                 | PK=ORG#{slug}, SK begins_with REPO#                   |
//	| deployment secret               | GetItem / PutItem     | PK=SECRET#{name}, SK=SECRET (created once)            |
//	| outbox event                    | PutItem in a tx       | PK=ORG#{slug}#EVENT#{id}, SK=EVENT, ttl 30 days       |
//	| pending events of an org        | Query GSI1            | GSI1PK=ORG#{slug}#OUTBOX, GSI1SK={time}#{id}          |
//	| health check                    | GetItem               | PK=HEALTH, SK=HEALTH                                  |
//	| take a block of an org's rate   | UpdateItem            | PK=ORG#{slug}, SK=RATE: full_at, conditional on the   |
//	| limit tokens (rate.go)          |                       | tokens being in the bucket, ttl when full again       |
//	| count a failed authentication   | UpdateItem            | PK=AUTHFAIL#{client address}, SK=RATE (as above)      |
//	| owner of a GitHub repository    | GetItem / TransactW.  | PK=GHREPO#{owner/name}, SK=OWNER (tenancy.go)         |
//	| organization of an installation | GetItem / TransactW.  | PK=GHINSTALL#{id}, SK=INSTALL                         |
//	| installations of an org         | Query GSI1            | GSI1PK=ORG#{slug}#INSTALLS                            |
//	| web session signed out          | GetItem / PutItem     | PK=SESSION#{id}, SK=REVOKED, ttl its expiry           |
//	| GitHub comment command handled  | PutItem, conditional  | PK=GHCOMMAND#{repo}#comment#{id}#{at}, ttl 3 days     |
//
// What each call costs, by AWS's billing rules, package billing computes
// (BenchmarkCost in package healthsvc measures it per test per upload).
//
// The merge queue's items are listed in queue.go's header comment, the
// webhook endpoints', deliveries' and attempt log's in webhook.go's.
//
// A test is three items, so that what every upload writes is small. Its
// counter item (under 1 KB whatever the test's age) holds what
// classification reads: the runs of each recent hour, four counters packed
// into one number (counters.go), the monitored runs of older days, the
// streak, the status value, quarantine override and its end, flake time
// and rev, the flaky episode's counts, the clean runs and the last
// failure (healthattrs.go), and the upload and outcome of its latest run
// (what the test's web page shows of it, passing runs being counted, not
// kept). Every
// upload ADDs to it without reading it and gets it back as it was
// (ReturnValues ALL_OLD), which is all classification needs; a batch is
// counted once because the item keeps the tokens of the last batches
// applied to it. Its failure item (clusters, the pull requests of its
// latest failures) is written only when the test fails, its meta item
// (identity, owners, health as shown, ticket, the hours folded out of the
// counter item, exactly, packed into one attribute (foldedhours.go), and
// the older pull-request failure times packed into another, failedprs.go) on first sight, on a health write,
// when old hours are folded and when the failure item's pull requests are
// packed (one failure on a pull request in 16). A test
// stored by the earlier layout (everything on one item, a counter
// attribute each) is read and counted on as it is; its counters leave it
// as they leave every window.
//
// Repository keys are canonical: the host in lowercase, and on github.com
// the owner and name too (GitHub ignores their case); the item keeps the
// spelling first seen, which responses echo.
package store
