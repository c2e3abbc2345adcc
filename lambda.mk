# Lambda builds for `sam build` (BuildMethod: makefile): SAM runs
# `make build-<LogicalId>` with ARTIFACTS_DIR set. Each function is one
# folder of functions/, built as a static arm64 `bootstrap`.

LAMBDA_GOFLAGS = CGO_ENABLED=0 GOOS=linux GOARCH=arm64
define lambda
	$(LAMBDA_GOFLAGS) $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(1)
endef

# One target per AWS::Serverless::Function of template.yaml (a test checks).
.PHONY: build-StatusFunction build-OpenapiFunction build-GetTestDetailsFunction build-LinkTicketToTestCaseFunction build-ListQuarantinedTestsFunction build-ListUnhealthyTestsFunction build-ListFailingTestsFunction build-LabelFailuresFunction build-GetQuarantineConfigFunction build-CreateBundleUploadFunction build-IngestBundleFunction build-SchedulerFunction build-DeliverWebhooksFunction build-FoldQueueCommandsFunction build-CreateQueueFunction build-GetQueueFunction build-UpdateQueueFunction build-DeleteQueueFunction build-SubmitPullRequestFunction build-CancelPullRequestFunction build-RestartTestsOnPullRequestFunction build-GetSubmittedPullRequestFunction build-SetImpactedTargetsFunction build-GetMergeQueueTestingDetailsFunction build-ListPullRequestsFunction build-GithubWebhookFunction build-GetMergeQueueMetricsFunction build-WebFunction
build-StatusFunction:
	$(call lambda,status)

build-OpenapiFunction:
	$(call lambda,openapi)

build-GetTestDetailsFunction:
	$(call lambda,get-test-details)

build-LinkTicketToTestCaseFunction:
	$(call lambda,link-ticket-to-test-case)

build-ListQuarantinedTestsFunction:
	$(call lambda,list-quarantined-tests)

build-ListUnhealthyTestsFunction:
	$(call lambda,list-unhealthy-tests)

build-ListFailingTestsFunction:
	$(call lambda,list-failing-tests)

build-LabelFailuresFunction:
	$(call lambda,label-failures)

build-GetQuarantineConfigFunction:
	$(call lambda,get-quarantine-config)

build-CreateBundleUploadFunction:
	$(call lambda,create-bundle-upload)

build-IngestBundleFunction:
	$(call lambda,ingest-bundle)

build-SchedulerFunction:
	$(call lambda,scheduler)

build-DeliverWebhooksFunction:
	$(call lambda,deliver-webhooks)

build-FoldQueueCommandsFunction:
	$(call lambda,fold-queue-commands)

build-CreateQueueFunction:
	$(call lambda,create-queue)

build-GetQueueFunction:
	$(call lambda,get-queue)

build-UpdateQueueFunction:
	$(call lambda,update-queue)

build-DeleteQueueFunction:
	$(call lambda,delete-queue)

build-SubmitPullRequestFunction:
	$(call lambda,submit-pull-request)

build-CancelPullRequestFunction:
	$(call lambda,cancel-pull-request)

build-RestartTestsOnPullRequestFunction:
	$(call lambda,restart-tests-on-pull-request)

build-GetSubmittedPullRequestFunction:
	$(call lambda,get-submitted-pull-request)

build-SetImpactedTargetsFunction:
	$(call lambda,set-impacted-targets)

build-GetMergeQueueTestingDetailsFunction:
	$(call lambda,get-merge-queue-testing-details)

build-ListPullRequestsFunction:
	$(call lambda,list-pull-requests)

build-GetQueueHistoryFunction:
	$(call lambda,get-queue-history)

build-GithubWebhookFunction:
	$(call lambda,github-webhook)

build-GetMergeQueueMetricsFunction:
	$(call lambda,get-merge-queue-metrics)

build-WebFunction:
	$(call lambda,web)
