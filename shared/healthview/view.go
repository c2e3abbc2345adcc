package healthview

import (
	"net/url"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/testhealth"
)

// TimeFormat is the contract's timestamp form: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Timestamp spells t in TimeFormat.
func Timestamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// TestCase is the test case object of contract 2.1. The failure figures are
// pointers because list-unhealthy-tests leaves them out.
type TestCase struct {
	ID                   string     `json:"id"`
	Repository           HTMLURL    `json:"repository"`
	HTMLURL              string     `json:"html_url"`
	Name                 string     `json:"name"`
	Variant              string     `json:"variant"`
	Status               Status     `json:"status"`
	MostCommonFailures   *[]Failure `json:"most_common_failures,omitempty"`
	FailureRateLast7d    *float64   `json:"failure_rate_last_7d,omitempty"`
	FailureRateLast24h   *float64   `json:"failure_rate_last_24h,omitempty"`
	FilePath             string     `json:"file_path,omitempty"`
	Parent               string     `json:"parent,omitempty"`
	Classname            string     `json:"classname,omitempty"`
	Codeowners           []string   `json:"codeowners"`
	PullRequestsImpacted int        `json:"pull_requests_impacted_last_7d"`
	Quarantined          bool       `json:"quarantined"`
	Ticket               *HTMLURL   `json:"ticket,omitempty"`
}

// HTMLURL is an object holding a web address.
type HTMLURL struct {
	HTMLURL string `json:"html_url"`
}

// Status is a test's health, its reason and when it last changed.
type Status struct {
	Value     string `json:"value"`
	Reason    string `json:"reason"`
	Timestamp string `json:"timestamp"`
}

// Failure is one most-common-failure cluster.
type Failure struct {
	Summary         string `json:"summary"`
	OccurrenceCount int    `json:"occurrence_count"`
	LastOccurrence  string `json:"last_occurrence,omitempty"`
}

// Viewer renders stored test cases as the API shows them.
type Viewer struct {
	PublicAppURL string // base of the web app's links
}

// Full renders tc with every field, figures computed for now under its
// repository's settings s.
func (v Viewer) Full(tc testhealth.TestCase, s testhealth.Settings, now time.Time) TestCase {
	out := v.Brief(tc, s, now)
	failures := []Failure{}
	for _, f := range testhealth.MostCommonFailures(tc, 5, now) {
		failures = append(failures, Failure{Summary: f.Summary, OccurrenceCount: f.Count, LastOccurrence: Timestamp(f.Last)})
	}
	r7, r24 := testhealth.FailureRate(tc, testhealth.Week, now), testhealth.FailureRate(tc, testhealth.Day, now)
	out.MostCommonFailures, out.FailureRateLast7d, out.FailureRateLast24h = &failures, &r7, &r24
	return out
}

// Brief renders tc without the failure figures (list-unhealthy-tests);
// pull requests impacted are still counted for now, and a healthy test's
// reason states its evidence as of now.
func (v Viewer) Brief(tc testhealth.TestCase, s testhealth.Settings, now time.Time) TestCase {
	status := testhealth.Status(tc, s, now)
	out := TestCase{
		ID:          tc.ID,
		Repository:  HTMLURL{tc.Repo.HTMLURL()},
		HTMLURL:     v.TestURL(tc),
		Name:        tc.Name,
		Variant:     tc.Variant,
		Status:      Status{Value: status.Value, Reason: status.Reason, Timestamp: Timestamp(status.Timestamp)},
		FilePath:    tc.FilePath,
		Parent:      tc.Parent,
		Classname:   tc.Classname,
		Codeowners:  tc.Codeowners,
		Quarantined: tc.Quarantined,

		PullRequestsImpacted: testhealth.PullRequestsImpacted(tc, now),
	}
	if out.Codeowners == nil {
		out.Codeowners = []string{}
	}
	if tc.Ticket != nil {
		out.Ticket = &HTMLURL{tc.Ticket.HTMLURL}
	}
	return out
}

// UploadURL is an upload's page in the web app: {app}/{org}/uploads/{id}
// (ours), its counts and its failures with their labels.
func (v Viewer) UploadURL(org, id string) string {
	return strings.TrimRight(v.PublicAppURL, "/") + "/" + url.PathEscape(org) + "/uploads/" + url.PathEscape(id)
}

// TestURL is the test's page in the web app, built as the public uploader
// builds it: {app}/{org}/flaky-tests/test/{id}?repo={owner}%2F{name}.
func (v Viewer) TestURL(tc testhealth.TestCase) string {
	return strings.TrimRight(v.PublicAppURL, "/") + "/" + url.PathEscape(tc.Org) +
		"/flaky-tests/test/" + tc.ID + "?repo=" + url.QueryEscape(tc.Repo.Owner+"/"+tc.Repo.Name)
}
