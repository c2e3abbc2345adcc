// Package mergequeue owns the merge-queue engine: the pure rules that take a
// queue snapshot, what was observed on GitHub, and the time, and return the
// next snapshot with the effects to perform (contract 3.5–3.7). It does no
// I/O, reads no clock, and makes ids only through the newID func it is
// given; the driver (shared/queuesvc) applies its decisions to
// GitHub and DynamoDB.
//
// # Shape
//
// A Snapshot holds the queue settings, one Entry per pull request (its id
// kept across episodes: cancel or finish, then resubmit), the test Runs in
// progress or current, the recent Transitions, and the target head the
// queue accounts for. The API handlers call the commands (Submit, Cancel,
// Restart, UpdateQueue); the scheduled driver calls Step. Each returns a new
// snapshot (the one passed in is left as it was) and an Output: effects,
// transitions, and the entries and runs that changed, which the driver
// stores as their own items (the snapshot keeps only what the rules need).
//
// # The testing line
//
// Entries that have started testing hold a Position in their lane's line
// (SINGLE mode: one lane). A new run tests the target head plus every entry
// ahead in the line, in order, plus the PR. Each step re-checks every run
// against the line: if the PRs ahead are no longer exactly those it was
// built on (less those the queue merged since), or the target branch moved
// under the queue (BaseEpoch), the entry restarts. That one rule covers a
// failed, cancelled, manually merged or restarted PR ahead and an urgent
// PR jumping the line. Restart in place (the restart command) keeps the
// position, so the PRs behind, built on the same head of it, keep their runs.
//
// # Effects and idempotency: the driver's protocol
//
// Every effect has a deterministic Key. The driver must:
//
//  1. Load the snapshot with its Version, gather observations (after the
//     previous effects were performed), call Step.
//  2. Save the new snapshot conditionally on the loaded Version, with the
//     EVENT effects written to the outbox in the same transaction (keyed by
//     Event.ID, so a duplicate is dropped). If the condition fails, another
//     driver won: discard everything and stop.
//  3. Only then perform the other effects, in order. Report builds and merge
//     outcomes as observations to the next step.
//
// Merges are two-phase. Step never calls for a merge it has not first
// recorded as a MergeIntent on the entry, in the snapshot the driver must
// save before performing it. So two drivers stepping the same snapshot
// cannot both merge (only the one whose save wins performs effects), and a
// driver that crashes after the save leaves the intent behind: the next
// step repeats the merge after RetryInterval with the same key and pinned
// sha. Repeating is safe because GitHub merges a PR once and only at the
// pinned head; the outcome is confirmed by a MergeResult or by the PR
// observed merged (a failure is believed only when the same observations
// show the PR still unmerged). While an intent is open the entry is never
// restarted, and a cancel waits for the outcome. One exception: once the
// target branch changed under the queue, an unanswered merge is not
// repeated (it would land on an untested base); when the PR is then seen
// open, the intent is dropped and the entry restarts. Only the first PR of a line
// gets an intent, and the next only once the previous merge is confirmed,
// so merges happen in queue order.
//
// Builds are repeated the same way until a BuildResult arrives; commit
// statuses and branch deletions are best effort (a lost status is
// overwritten by the next one, a lost deletion leaves a stale branch).
//
// The target head the queue accounts for moves with its own confirmed
// merges; any other change (a push, a manual merge) starts a new BaseEpoch,
// and every run built before it restarts. A head observed before the
// queue's own merge would look foreign and cause needless restarts, never a
// wrong merge: hence observations are gathered after effects.
//
// # Optimistic merge
//
// With canOptimisticallyMerge and a pending-failure depth of at least 1, a
// passed run of a later entry that contained the entries ahead of it (at
// their current heads, in this base epoch) lets them merge, in line order,
// verified by that run: a PENDING_FAILURE entry within the depth of it
// (PENDING_FAILURE → MERGED), and a TESTING one, whose own run is then
// cancelled (TESTING → TESTS_PASSED, LATER_TEST_RUN_PASSED, then MERGED).
// With depth 0 a failed entry fails at once, so the setting changes
// nothing, as the commercial queue documents.
//
// # Parallel lanes
//
// In PARALLEL mode a PR needs its impacted targets (setImpactedTargets, for
// its head; the driver reads them into Observations.Targets) to leave
// NOT_READY, and depends on every earlier entry of the line whose targets
// intersect its own ("ALL" intersects all but an empty list; an empty
// list intersects nothing) and, transitively, on theirs. It is tested on
// top of those only, merges once they have, and a failure restarts only
// the PRs that depended on it. The engine keeps targets as 1,024-bit
// fingerprints (Targets): a false overlap only joins two lanes. Lanes
// share the queue's concurrency.
//
// # Direct merge
//
// With directMergeMode ALWAYS and an empty testing line, the first waiting
// PR (DirectMergeCandidate) merges without a test run when GitHub shows its
// head up to date with the target head the queue accounts for and its own
// required statuses passed there (Observations.Direct): a Direct run of
// its head alone stands for the test run, so the entry still moves PENDING
// → TESTING → TESTS_PASSED → MERGED (MERGE_GRAPH_DIRECT_MERGE).
//
// # Batching and bisection
//
// With batch on, up to batchingMinSize consecutive waiting PRs of one
// priority that are not noBatch share one run (a short batch waits up to
// batchingMaxWaitTimeMinutes to fill); batches are predictive like single
// PRs, and each PR of a passed batch merges on its own. A failed batch
// keeps its PRs TESTING while bisection (bisect.go) looks for the culprit
// on its own slots.
package mergequeue
