package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxVariantLen is the longest variant, in characters, that a bundle may
// name; the uploader refuses longer ones, so a longer one means a forged or
// broken meta.json.
const MaxVariantLen = 64

// Meta is what the service reads from a bundle's meta.json. The uploader
// writes many more fields (see Write); those are ignored on reading
// because nothing the service computes depends on them.
type Meta struct {
	// Version is the meta.json format version, "1" for every uploader
	// release so far.
	Version string
	// CLIVersion is the uploader's version string.
	CLIVersion string
	// Org is the organization's URL slug.
	Org string
	// Repo is the repository and the commit tested.
	Repo Repo
	// BundleUploadID is the id createBundleUpload answered; ingestion is
	// idempotent on it.
	BundleUploadID string
	// UploadTime is when the uploader built the bundle (upload_time_epoch,
	// seconds); zero when meta.json does not say.
	UploadTime time.Time
	// Variant distinguishes runs of the same tests in different
	// environments (for example an OS); "" when none.
	Variant string
	// Envs are the CI environment variables the uploader chose to send.
	Envs map[string]string
	// Tags are the user's --tags key/value pairs, in order.
	Tags []Tag
}

// Repo identifies the repository and commit a bundle's results were
// produced from.
type Repo struct {
	// Host, Owner and Name identify the repository (e.g. "github.com",
	// "acme", "widgets"); they are part of every test id.
	Host, Owner, Name string
	// HeadSHA and HeadBranch are the commit and branch tested.
	HeadSHA, HeadBranch string
	// URL is the repository's remote URL as the uploader saw it.
	URL string
	// HeadCommitTime is the tested commit's time; zero when unknown.
	HeadCommitTime time.Time
}

// Tag is one user-supplied key/value label of an upload.
type Tag struct{ Key, Value string }

// metaJSON is the subset of the uploader's meta.json that Read needs.
// Numbers are json.Number because the uploader's serde writes integers but
// older or third-party writers have been seen writing floats.
type metaJSON struct {
	Version         json.RawMessage   `json:"version"`
	CLIVersion      string            `json:"cli_version"`
	Org             string            `json:"org"`
	Repo            repoJSON          `json:"repo"`
	BundleUploadID  string            `json:"bundle_upload_id"`
	UploadTimeEpoch json.Number       `json:"upload_time_epoch"`
	Variant         string            `json:"variant"`
	Envs            map[string]string `json:"envs"`
	Tags            []tagJSON         `json:"tags"`
	FileSets        []fileSetJSON     `json:"file_sets"`
}

type repoJSON struct {
	Repo struct {
		Host  string `json:"host"`
		Owner string `json:"owner"`
		Name  string `json:"name"`
	} `json:"repo"`
	URL         string      `json:"repo_url"`
	HeadSHA     string      `json:"repo_head_sha"`
	HeadBranch  string      `json:"repo_head_branch"`
	CommitEpoch json.Number `json:"repo_head_commit_epoch"`
}

type tagJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type fileSetJSON struct {
	Files []struct {
		OriginalPath string `json:"original_path"`
		Path         string `json:"path"`
	} `json:"files"`
}

// parseMeta decodes and checks meta.json. It also returns the bundle path
// to original path map from file_sets, so that a refused JUnit file can be
// named the way the user knows it ("reports/unit.xml", not "junit/3").
func parseMeta(b []byte) (Meta, map[string]string, error) {
	var mj metaJSON
	if err := json.Unmarshal(b, &mj); err != nil {
		return Meta{}, nil, refusef(err, "meta.json is not valid JSON of the expected shape: %v", err)
	}
	var missing []string
	if mj.Org == "" {
		missing = append(missing, "org")
	}
	if mj.Repo.Repo.Host == "" {
		missing = append(missing, "repo.repo.host")
	}
	if mj.Repo.Repo.Owner == "" {
		missing = append(missing, "repo.repo.owner")
	}
	if mj.Repo.Repo.Name == "" {
		missing = append(missing, "repo.repo.name")
	}
	if mj.BundleUploadID == "" {
		missing = append(missing, "bundle_upload_id")
	}
	if len(missing) > 0 {
		return Meta{}, nil, refusef(nil, "meta.json lacks %s", strings.Join(missing, ", "))
	}
	if n := utf8.RuneCountInString(mj.Variant); n > MaxVariantLen {
		return Meta{}, nil, refusef(nil, "meta.json names a variant of %d characters; at most %d are allowed", n, MaxVariantLen)
	}
	upload, err := epoch(mj.UploadTimeEpoch)
	if err != nil {
		return Meta{}, nil, refusef(err, "meta.json has an unreadable upload_time_epoch %q", mj.UploadTimeEpoch)
	}
	commit, err := epoch(mj.Repo.CommitEpoch)
	if err != nil {
		return Meta{}, nil, refusef(err, "meta.json has an unreadable repo.repo_head_commit_epoch %q", mj.Repo.CommitEpoch)
	}
	m := Meta{
		Version:        versionString(mj.Version),
		CLIVersion:     mj.CLIVersion,
		Org:            mj.Org,
		BundleUploadID: mj.BundleUploadID,
		UploadTime:     upload,
		Variant:        mj.Variant,
		Envs:           mj.Envs,
		Repo: Repo{
			Host:           mj.Repo.Repo.Host,
			Owner:          mj.Repo.Repo.Owner,
			Name:           mj.Repo.Repo.Name,
			HeadSHA:        mj.Repo.HeadSHA,
			HeadBranch:     mj.Repo.HeadBranch,
			URL:            mj.Repo.URL,
			HeadCommitTime: commit,
		},
	}
	for _, t := range mj.Tags {
		m.Tags = append(m.Tags, Tag(t))
	}
	orig := make(map[string]string)
	for _, fs := range mj.FileSets {
		for _, f := range fs.Files {
			if f.Path != "" && f.OriginalPath != "" {
				orig[cleanName(f.Path)] = f.OriginalPath
			}
		}
	}
	return m, orig, nil
}

// versionString accepts "1" and 1 alike: the field is a string in every
// uploader release, but nothing is gained by refusing a number.
func versionString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return string(raw)
	}
	return ""
}

// epoch turns unix seconds into a UTC time; 0 and absent mean unknown and
// give the zero time, so that callers can test IsZero.
func epoch(n json.Number) (time.Time, error) {
	if n == "" {
		return time.Time{}, nil
	}
	if i, err := n.Int64(); err == nil {
		if i == 0 {
			return time.Time{}, nil
		}
		return time.Unix(i, 0).UTC(), nil
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.Abs(f) > 1e15 {
		return time.Time{}, fmt.Errorf("not a unix time: %q", n)
	}
	if f == 0 {
		return time.Time{}, nil
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// prEnv lists, in order of trust, the variables CI systems use to name the
// pull or merge request being tested. Variables whose value is a URL give
// their number after the last "/pull/".
var prEnv = []struct {
	name string
	url  bool
}{
	{"CI_MERGE_REQUEST_IID", false},                 // GitLab
	{"BUILDKITE_PULL_REQUEST", false},               // Buildkite ("false" when none)
	{"CIRCLE_PR_NUMBER", false},                     // CircleCI, forks
	{"CIRCLE_PULL_REQUEST", true},                   // CircleCI, URL
	{"SYSTEM_PULLREQUEST_PULLREQUESTNUMBER", false}, // Azure Pipelines
	{"CHANGE_ID", false},                            // Jenkins multibranch
	{"DRONE_PULL_REQUEST", false},                   // Drone
	{"SEMAPHORE_GIT_PR_NUMBER", false},              // Semaphore
	{"TRAVIS_PULL_REQUEST", false},                  // Travis ("false" when none)
	{"BITBUCKET_PR_ID", false},                      // Bitbucket Pipelines
	{"CI_PULL_REQUEST", true},                       // generic; a URL on some CIs
	{"PULL_REQUEST_NUMBER", false},                  // generic
}

// PullRequest returns the pull or merge request number the CI
// environment in m.Envs names, 0 when none does. TRUNK_PR_NUMBER, an
// override, comes first. GitHub Actions is read
// from GITHUB_REF ("refs/pull/N/merge" or "refs/pull/N/head"); the other
// systems from their own variables (CI_MERGE_REQUEST_IID,
// BUILDKITE_PULL_REQUEST, CIRCLE_PR_NUMBER, CIRCLE_PULL_REQUEST,
// SYSTEM_PULLREQUEST_PULLREQUESTNUMBER, CHANGE_ID, DRONE_PULL_REQUEST,
// SEMAPHORE_GIT_PR_NUMBER, TRAVIS_PULL_REQUEST, BITBUCKET_PR_ID,
// CI_PULL_REQUEST, PULL_REQUEST_NUMBER), the first that holds a number
// winning. Only positive decimal integers count, so the "false" that
// Travis and Buildkite write for branch builds, and Gerrit change ids in
// CHANGE_ID, are not mistaken for pull requests.
func (m Meta) PullRequest() int {
	// TRUNK_PR_NUMBER is the public uploader's override of the CI's
	// number, and what mainguard upload --pr sends: it wins.
	if n := positive(strings.TrimSpace(m.Envs["TRUNK_PR_NUMBER"])); n > 0 {
		return n
	}
	if ref, ok := m.Envs["GITHUB_REF"]; ok {
		if rest, ok := strings.CutPrefix(ref, "refs/pull/"); ok {
			if num, tail, ok := strings.Cut(rest, "/"); ok && (tail == "merge" || tail == "head") {
				if n := positive(num); n > 0 {
					return n
				}
			}
		}
	}
	for _, e := range prEnv {
		v := strings.TrimSpace(m.Envs[e.name])
		if e.url {
			if i := strings.LastIndex(v, "/pull/"); i >= 0 {
				v = strings.TrimSuffix(v[i+len("/pull/"):], "/")
			}
		}
		if n := positive(v); n > 0 {
			return n
		}
	}
	return 0
}

// positive parses a positive decimal integer made only of ASCII digits,
// returning 0 for anything else (signs, spaces, overflow, "0").
func positive(s string) int {
	if s == "" || len(s) > 18 {
		return 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
