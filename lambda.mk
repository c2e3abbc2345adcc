# Lambda builds for `sam build` (BuildMethod: makefile): SAM runs
# `make build-<LogicalId>` with ARTIFACTS_DIR set. Each function is one
# folder of functions/, built as a static arm64 `bootstrap`.

LAMBDA_GOFLAGS = CGO_ENABLED=0 GOOS=linux GOARCH=arm64
define lambda
	$(LAMBDA_GOFLAGS) $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(1)
endef

# One target per AWS::Serverless::Function of template.yaml (a test checks).
.PHONY: build-StatusFunction build-GetTestDetailsFunction build-LinkTicketToTestCaseFunction build-ListQuarantinedTestsFunction build-ListUnhealthyTestsFunction build-ListFailingTestsFunction build-GetQuarantineConfigFunction build-CreateBundleUploadFunction build-IngestBundleFunction build-SchedulerFunction
build-StatusFunction:
	$(call lambda,status)

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

build-GetQuarantineConfigFunction:
	$(call lambda,get-quarantine-config)

build-CreateBundleUploadFunction:
	$(call lambda,create-bundle-upload)

build-IngestBundleFunction:
	$(call lambda,ingest-bundle)

build-SchedulerFunction:
	$(call lambda,scheduler)
