// Package store owns the DynamoDB single-table model: keys, items, reads and
// conditional writes. It turns SDK errors into domain errors (a failed
// condition is errs.Conflict, also inside a cancelled transaction), so no
// SDK type leaks upward.
//
// One table (TableSpec, table.go): generic keys PK/SK, two indexes, GSI1
// (GSI1PK/GSI1SK) and GSI2 (GSI2PK/GSI2SK), each projecting all attributes
// and written sparsely (an item is in an index only while it carries the
// index's keys), TTL on the attribute "ttl". Every attribute name the
// code spells is a constant of the table below the access patterns (the
// tagged fields of the types the store marshals name the others). Every
// partition key of an organization's data starts with ORG#{slug}; the
// exceptions are what a request finds before it knows the organization
// (its token, web session, failed authentications, a GitHub repository's
// owner, an installation's organization, GitHub deliveries and comment
// commands handled) and what belongs to the deployment (secrets, the
// health check, the merge-queue scheduler's cursor and the active-queue,
// pending-command and repository indexes).
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
//	| health write (+ its events)     | TransactWriteItems    | counter item (rev = read rev), meta item, failure     |
//	|                                 |                       | item (if clusters dropped), its index entry           |
//	|                                 |                       | (PK=…#TEST#{id}, SK=INDEX) + new event items          |
//	| unhealthy tests of a repo       | Query GSI1 + BatchGet | GSI1PK=ORG#{slug}#REPO#{repo}#STATUS#FLAKY|BROKEN     |
//	|                                 |                       | on index entries, then the page's test items          |
//	| quarantine candidates of a repo | Query GSI2 + BatchGet | GSI2PK=ORG#{slug}#REPO#{repo}#QUARANTINE,             |
//	|                                 |                       | GSI2SK=A#/U#{id} (filtered: an override's end, qu,    |
//	|                                 |                       | not passed)                                           |
//	| failed runs in a time range     | Query per day         | PK=ORG#{slug}#REPO#{repo}#FAILS#{unix day}, SK={time} |
//	|                                 |                       | #{test}#{upload}#{seq}, ttl 35 days (and GSI1, where  |
//	|                                 |                       | the earlier layout indexed its run items)             |
//	| newest CODEOWNERS of a repo     | GetItem / PutItem     | PK=ORG#{slug}, SK=REPO#{repo}#CODEOWNERS (newer wins) |
//	| check run of a commit (once)    | GetItem + UpdateItem  | PK=ORG#{slug}#REPO#{repo}#CHECKRUN#{sha}, SK=CHECKRUN |
//	|                                 |                       | (claimed_at, then check_run_id; claims.go)            |
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

// The attribute names the store's code spells, which it spells only
// through these (doc_test.go holds them to the table above, to TableSpec
// and to the code). The tagged fields of the types it marshals (Org,
// Token, Repo, Upload, the webhook types, testhealth.TestCase) name the
// others, and some of these again: Go cannot spell a tag with a constant.
// Short
// names are on the items every upload rewrites, where each byte is paid
// for; "…" marks a prefix, followed by an hour, day, cluster or number.
const (
	// The table's keys (TableSpec), the same on every item; template.yaml
	// declares them too (a test compares).
	AttrPK     = "PK"
	AttrSK     = "SK"
	AttrGSI1PK = "GSI1PK"
	AttrGSI1SK = "GSI1SK"
	AttrGSI2PK = "GSI2PK"
	AttrGSI2SK = "GSI2SK"
	// AttrTTL holds the unix second after which DynamoDB may delete an item.
	AttrTTL = "ttl"

	// A test's counter item (SK=TEST), written by every upload that runs it.
	attrHour            = "h"      // h{unix hour}: the hour's four counters, packed (counters.go)
	attrDay             = "d"      // d{unix day}: a folded day's monitored counters, packed
	attrBatchToken      = "t"      // t0…t3: the tokens of the last batches applied (batchTokens)
	attrRev             = "rev"    // the health write's version (optimistic lock)
	attrStreak          = "streak" // the broken streak's commits
	attrLastRun         = "lr"     // the latest run, unix nanoseconds
	attrStatusValue     = "sv"     // the status value (healthy, flaky, broken)
	attrOverride        = "qo"     // the quarantine override
	attrFlakeAt         = "fa"     // when the flake evidence was seen, unix nanoseconds
	attrIdentityHash    = "ih"     // digest of the identity the meta item holds
	attrOwnersHash      = "oh"     // digest of the owners the meta item holds
	attrLastUpload      = "lu"     // the latest upload and the test's outcome in it (outcomeCode)
	attrStreakOpen      = "so"     // the broken streak's latest commit has had one failed attempt (1)
	attrEpisode         = "ep"     // the flaky episode's monitored runs and failures, packed
	attrCleanRuns       = "cr"     // monitored runs since the last monitored failure
	attrLastFailure     = "lf"     // the last monitored failure, unix seconds
	attrBrokenUntil     = "lb"     // when the test was last broken, unix seconds
	attrQuarantineUntil = "qu"     // the end of the quarantine override, unix seconds (also on the index entry)
	// The earlier layout's counters, one attribute per hour and counter,
	// still read and removed.
	attrPassedHour    = "hp." // hp.{hour}
	attrFailedHour    = "hf." // hf.{hour}
	attrMonPassedHour = "mp." // mp.{hour}
	attrMonFailedHour = "mf." // mf.{hour}

	// A test's failure item (SK=TEST#FAIL), written when it fails.
	attrClusterCount = "cc." // cc.{cluster}.{day}: the cluster's failures that day
	attrClusterText  = "cs." // cs.{cluster}: its latest text
	attrClusterLast  = "cl." // cl.{cluster}: its latest failure, unix milliseconds
	attrFailedPR     = "pr." // pr.{number}: the pull request's latest failed run, unix milliseconds

	// A test's meta item (SK=TEST#META): testhealth.TestCase's tagged
	// fields, and these.
	attrFoldedHours        = "xh"  // the hours folded out of the counter item, packed (foldedhours.go)
	attrOldHour            = "x"   // x{unix hour}: a folded hour as first kept, one attribute each
	attrPackedPRs          = "prs" // the older pull-request failure times, packed (failedprs.go)
	attrOrg                = "org"
	attrRepo               = "repo" // map of attrHost, attrOwner, attrName
	attrHost               = "host"
	attrOwner              = "owner"
	attrName               = "name"
	attrID                 = "id" // also on the index entry; on a counter item, the earlier layout
	attrVariant            = "variant"
	attrFirstSeen          = "first_seen"
	attrFilePath           = "file_path"
	attrParent             = "parent"
	attrClassname          = "classname"
	attrCodeowners         = "codeowners"
	attrStatus             = "status" // map of attrValue, attrReason, attrAt; on a counter item, the earlier layout
	attrValue              = "value"
	attrReason             = "reason"
	attrAt                 = "at"
	attrFlake              = "flake" // map of attrAt, attrSHA, attrBranch
	attrSHA                = "sha"
	attrBranch             = "branch"
	attrQuarantineOverride = "quarantine_override" // also on a counter item of the earlier layout
	attrQuarantineEnd      = "quarantine_until"
	attrQuarantineSince    = "quarantine_since"
	attrTicket             = "ticket"
	attrLastRunTime        = "last_run" // on the counter item (as attrLastRun), not the meta item

	// A test's index entry (SK=INDEX): the index keys, attrID, attrQuarantineUntil and
	attrAlsoAuto = "qa" // an override with an end whose test is unhealthy: automatic quarantine lists it after the end

	// A batch record (SK=RUNS#…), one per batch of an upload done.
	attrBatchRecorded = "in" // when it was recorded, unix nanoseconds
	attrBatchBranch   = "br" // the upload's branch
	attrBatchPassed   = "p"  // the ids of the tests that passed, a string set
	attrBatchFailed   = "f"  // the ids of the tests that failed, a string set

	// Organizations, tokens, repositories (Org, Token, Repo's tags, and these).
	attrEnumCase        = "enum_case"
	attrRevokedAt       = "revoked_at"
	attrRef             = "ref"
	attrCreatedAt       = "created_at"
	attrJiraBaseURL     = "jira_base_url"
	attrLinearWorkspace = "linear_workspace"
	attrDefaultBranch   = "default_branch"

	// Uploads (Upload's fields, by tag or by name, and these).
	attrState            = "state" // also of a queue entry and an event's delivery
	attrFinishedAt       = "finished_at"
	attrFailedTests      = "failed_tests"
	attrFailedTestsTotal = "failed_tests_total"
	attrRunsAt           = "runs_at"
	attrGuarded          = "guarded"
	attrGuardCases       = "guard_cases"
	attrGuardFailed      = "guard_failed"
	attrFiles            = "Files"
	attrTests            = "Tests"
	attrRuns             = "Runs"
	attrPassed           = "Passed"
	attrFailed           = "Failed"
	attrSkipped          = "Skipped"
	attrUploadSHA        = "SHA"
	attrUploadBranch     = "Branch"
	attrUploadPR         = "PR"
	attrLease            = "lease"       // the ingest holding the upload
	attrLeaseUntil       = "lease_until" // until when, sortable time
	attrResumeAt         = "resume_at"   // when the scheduler resumes it if the lease lapsed

	// Claims of a GitHub object made once (claims.go), rate buckets (rate.go).
	attrClaimedAt  = "claimed_at"
	attrCheckRunID = "check_run_id"
	attrCommentID  = "comment_id"
	attrFullAt     = "full_at"

	// Merge-queue items (queue.go, queuecmds.go).
	attrVersion    = "version"
	attrQueueID    = "queue_id"
	attrSnapshot   = "snap"
	attrClocks     = "clocks"
	attrLastCmd    = "last_cmd"
	attrEntry      = "entry"
	attrChangedAt  = "changed_at"
	attrNumber     = "number"
	attrHeadRef    = "head_ref"
	attrRecord     = "rec"
	attrHistory    = "rh"
	attrTransition = "tr"
	attrCursor     = "cursor"
	attrData       = "data"
	attrChunks     = "chunks"
	attrCount      = "count"
	attrAll        = "all"
	attrGeneration = "gen"
	attrCommand    = "cmd"
	attrFoldedIn   = "folded_in"

	// Webhook endpoints, outbox events and their deliveries (webhook.go).
	attrSecret         = "secret"
	attrPreviousSecret = "previous_secret"
	attrPreviousUntil  = "previous_until"
	attrDeliveryCycle  = "delivery_cycle"
	attrAttempts       = "attempts"
	attrNextAt         = "next_at"
	attrEventID        = "event_id"
	attrEndpointID     = "endpoint_id"
)
