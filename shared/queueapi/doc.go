// Package queueapi owns the merge-queue endpoints of the API (contract 3.4:
// createQueue, getQueue, updateQueue, deleteQueue, submitPullRequest,
// cancelPullRequest, restartTestsOnPullRequest, getSubmittedPullRequest,
// setImpactedTargets, getMergeQueueTestingDetails, listPullRequests) and
// GitHub's webhook intake (POST /github/webhook, contract 3.8): request
// validation with the contract's sentences, the JSON shapes of queues,
// submitted pull requests and test runs, and the hand-off of every change
// to the driver, which saves it and advances the queue at once.
package queueapi
