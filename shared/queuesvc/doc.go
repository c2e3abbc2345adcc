// Package queuesvc, the merge queue's service, owns applying the merge-queue engine to the world: it
// loads a queue's snapshot from the store, gathers what it needs from
// GitHub, runs the engine (a command or mergequeue.Step), saves the new
// snapshot conditionally on the version it loaded together with the outbox
// events, and only then performs the engine's effects through the GitHub
// client, feeding their outcomes to the next step.
//
// The protocol is the one mergequeue's doc.go describes. Its consequences
// here: a save that loses the optimistic lock discards the step and its
// effects, and the driver reloads and steps again with the outcomes it
// still holds; GitHub errors never fail a step (an observation GitHub did
// not answer is simply absent, a build or merge GitHub did not answer is
// repeated by the engine after mergequeue.RetryInterval, idempotently), so
// a 500, a 502, a timeout or a rate limit only delays the queue. A crash
// at any point loses at most outcomes, which the engine recovers by
// repeating the effect or by observing its result on GitHub.
//
// Tick advances every active queue, page by page of the active index with
// several queues at once, within a time budget; when the budget runs out it
// leaves a cursor in the store and the next call continues there. The
// scheduled function never scans the table, and its cost follows the
// active queues only.
package queuesvc
