package queueapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tfQueue is the queue as the commercial Terraform provider reads it from
// getQueue and updateQueue: its 22 settings, with lowercase enums, and
// requiredStatuses null (from branch protection) or a list, [] included.
type tfQueue struct {
	Mode                        string    `json:"mode"`
	Concurrency                 int       `json:"concurrency"`
	State                       string    `json:"state"`
	TestingTimeoutMinutes       int       `json:"testingTimeoutMinutes"`
	PendingFailureDepth         int       `json:"pendingFailureDepth"`
	CanOptimisticallyMerge      bool      `json:"canOptimisticallyMerge"`
	Batch                       bool      `json:"batch"`
	BatchingMaxWaitTimeMinutes  int       `json:"batchingMaxWaitTimeMinutes"`
	BatchingMinSize             int       `json:"batchingMinSize"`
	CreatePrsForTestingBranches bool      `json:"createPrsForTestingBranches"`
	MergeMethod                 string    `json:"mergeMethod"`
	CommentsEnabled             bool      `json:"commentsEnabled"`
	CommandsEnabled             bool      `json:"commandsEnabled"`
	StatusCheckEnabled          bool      `json:"statusCheckEnabled"`
	DirectMergeMode             string    `json:"directMergeMode"`
	OptimizationMode            string    `json:"optimizationMode"`
	BisectionConcurrency        int       `json:"bisectionConcurrency"`
	ExtensionEnabled            bool      `json:"extensionEnabled"`
	EnqueueingLabel             string    `json:"enqueueingLabel"`
	LabelCommandsEnabled        bool      `json:"labelCommandsEnabled"`
	StateLabelsEnabled          bool      `json:"stateLabelsEnabled"`
	RequiredStatuses            *[]string `json:"requiredStatuses"`
}

// tfRequest is what the provider sends to updateQueue for a configuration:
// the identity, each attribute the configuration sets, and
// deleteRequiredStatuses when it leaves required_statuses null.
func tfRequest(settings map[string]any) map[string]any {
	body := q(settings)
	if _, ok := settings["requiredStatuses"]; !ok {
		body["deleteRequiredStatuses"] = true
	}
	return body
}

// TestTerraformProviderCycle drives the bodies the commercial Terraform
// provider sends and reads (its trunk_merge_queue resource) through the
// handlers, for an organization set to lowercase enums: create then
// configure, read back with no drift, update in place, import (a read),
// and destroy.
func TestTerraformProviderCycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if err := e.App.Store.SetOrgEnumCase(context.Background(), "acme", "lower"); err != nil {
		t.Fatal(err)
	}
	read := func(path string, body any) tfQueue {
		t.Helper()
		code, resp := e.call(path, body)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, resp)
		}
		var got tfQueue
		if err := json.Unmarshal([]byte(resp), &got); err != nil {
			t.Fatalf("%s: %v in %s", path, err, resp)
		}
		var all map[string]json.RawMessage
		_ = json.Unmarshal([]byte(resp), &all)
		for _, f := range []string{"extensionEnabled", "enqueueingLabel", "labelCommandsEnabled", "stateLabelsEnabled", "requiredStatuses"} {
			if _, ok := all[f]; !ok {
				t.Errorf("%s answers no %s", path, f)
			}
		}
		return got
	}

	// terraform apply: createQueue with mode and concurrency, then
	// updateQueue with everything the configuration sets.
	e.ok("createQueue", q(map[string]any{"mode": "single", "concurrency": 2}), nil)
	config := map[string]any{
		"mode": "single", "concurrency": 2, "state": "running", "testingTimeoutMinutes": 60,
		"pendingFailureDepth": 1, "canOptimisticallyMerge": true, "batch": true,
		"batchingMaxWaitTimeMinutes": 3, "batchingMinSize": 2, "createPrsForTestingBranches": false,
		"mergeMethod": "squash", "commentsEnabled": true, "commandsEnabled": true, "statusCheckEnabled": true,
		"directMergeMode": "off", "optimizationMode": "bisection_skip_redundant_tests", "bisectionConcurrency": 2,
		"extensionEnabled": true, "enqueueingLabel": "ready-to-merge", "labelCommandsEnabled": false,
		"stateLabelsEnabled": false, "requiredStatuses": []string{},
	}
	applied := read("updateQueue", tfRequest(config))
	none := []string{}
	want := tfQueue{
		Mode: "single", Concurrency: 2, State: "running", TestingTimeoutMinutes: 60, PendingFailureDepth: 1,
		CanOptimisticallyMerge: true, Batch: true, BatchingMaxWaitTimeMinutes: 3, BatchingMinSize: 2,
		MergeMethod: "squash", CommentsEnabled: true, CommandsEnabled: true, StatusCheckEnabled: true,
		DirectMergeMode: "off", OptimizationMode: "bisection_skip_redundant_tests", BisectionConcurrency: 2,
		ExtensionEnabled: true, EnqueueingLabel: "ready-to-merge", RequiredStatuses: &none,
	}
	if d := cmp.Diff(applied, want); d != "" {
		t.Fatalf("updateQueue answer (-got +want):\n%s", d)
	}
	// The second plan reads the queue: what it reads is what was applied.
	if d := cmp.Diff(read("getQueue", q(nil)), want); d != "" {
		t.Errorf("drift on refresh (-got +want):\n%s", d)
	}

	// An update in place: required_statuses removed from the
	// configuration (back to branch protection), a few settings changed.
	delete(config, "requiredStatuses")
	config["concurrency"], config["mergeMethod"], config["state"] = 3, "rebase", "paused"
	want.Concurrency, want.MergeMethod, want.State, want.RequiredStatuses = 3, "rebase", "paused", nil
	if d := cmp.Diff(read("updateQueue", tfRequest(config)), want); d != "" {
		t.Errorf("update in place (-got +want):\n%s", d)
	}
	// terraform import reads the queue by its identity alone.
	if d := cmp.Diff(read("getQueue", q(nil)), want); d != "" {
		t.Errorf("import (-got +want):\n%s", d)
	}
	// terraform destroy, then a refresh finds it gone (404 drops it from
	// the state).
	e.ok("deleteQueue", q(nil), nil)
	if code, body := e.call("getQueue", q(nil)); code != http.StatusNotFound {
		t.Errorf("getQueue after deleteQueue: %d %s", code, body)
	}
}

// TestEmptyRequiredStatusesPassOnceBuilt: a queue whose requiredStatuses
// is an explicit [] requires nothing; its run passes as soon as its test
// branch is built, with no check reported, and the PR merges (main is not
// protected here: GitHub itself would refuse a PR without the status its
// protection requires).
func TestEmptyRequiredStatusesPassOnceBuilt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if err := e.Sim.SetRequiredStatusChecks(repoFull, "main", nil); err != nil {
		t.Fatal(err)
	}
	e.ok("createQueue", q(nil), nil)
	e.ok("updateQueue", q(map[string]any{"requiredStatuses": []string{}}), nil)
	a := e.openPR("a")
	e.ok("submitPullRequest", prq(a, nil), nil)
	for range 5 {
		if e.pr(a).State == "MERGED" {
			break
		}
		e.tick() // no CI: nothing reports any status
	}
	if got := e.pr(a).State; got != "MERGED" {
		t.Errorf("PR %d is %s, want MERGED with no status required", a, got)
	}
}

// TestOrganizationsChooseTheirEnumCase: one organization's answers in
// lowercase, another's in the deployment's UPPERCASE; input in any case.
func TestOrganizationsChooseTheirEnumCase(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(map[string]any{"mode": "Parallel"}), nil)
	var got struct{ Mode, State string }
	e.ok("getQueue", q(nil), &got)
	if got.Mode != "PARALLEL" || got.State != "RUNNING" {
		t.Errorf("default case: %+v", got)
	}
	if err := e.App.Store.SetOrgEnumCase(context.Background(), "acme", "lower"); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Minute) // past the copy's memory of the old case
	e.ok("getQueue", q(nil), &got)
	if got.Mode != "parallel" || got.State != "running" {
		t.Errorf("lower case: %+v", got)
	}
}
