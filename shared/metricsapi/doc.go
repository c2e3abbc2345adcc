// Package metricsapi owns GET /getMergeQueueMetrics (contract 3.9): it
// reads the organization's queues (or one repository's) from the store at
// request time and answers their Prometheus text through package queuemetrics.
//
// Per queue it makes one read beyond the listing: the queue item (which
// carries the snapshot) comes with the listing, one Query on GSI2 per
// repository, and the last hour of transition items is one Query. The
// gauges are counted from the snapshot's entries; the hour's conclusions,
// restarts and histograms from the transition items, whose conclusions
// carry their episode's first PENDING and TESTING times and time in
// TESTING (store.QueueRecord.Advance), so a pull request that waited for
// hours is measured whole although only the last hour is read.
//
// A package of its own rather than a file of queueapi: queueapi's handlers are
// POST JSON commands handed to the driver and GitHub; this is a read-only
// GET answering text, which needs three store reads (its Store interface)
// and nothing of GitHub, so it is tested and benchmarked on the store
// alone, and its function gets a read-only policy.
//
// Choices the contract leaves open: a named repository with no queue of
// the token's organization (absent, or another tenant's) is 404, like any
// other absent repository; with no repo, an organization without queues
// gets an empty 200 (a valid, empty scrape). repoHost without repo is
// ignored, as unknown fields are. Only queue_type="main" series are
// written: batching, hence bisection, is not implemented yet.
package metricsapi
