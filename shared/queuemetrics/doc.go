// Package queuemetrics owns the merge queue's metric families, the
// Prometheus text that GET /getMergeQueueMetrics (package metricsapi, contract
// 3.9) answers: it turns per-queue figures into metric families with the
// contract's names, labels, help texts, types and buckets, and writes them in
// the text exposition format. It reads nothing itself: the caller fills
// [Queue] from the store at request time (state counts, and the last hour's
// transition records through [WindowOf]), so the values never come from
// process memory.
//
// The two rolling counts mq_pr_conclusions_1h_total and
// mq_pr_restarts_1h_total are typed gauge, as the contract and the public
// service have them: they are a snapshot of the last hour and go down as the
// window moves, so rate() on them would be wrong. promtool's linter objects to
// a "_total" suffix on a gauge; those two complaints are the price of
// wire-compatibility and are the only ones the tests tolerate. Our own
// families follow the conventions: mq_pr_flaky_retries_1h, a gauge of the
// same kind, has no "_total".
package queuemetrics
