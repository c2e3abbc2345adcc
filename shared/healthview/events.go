package healthview

import (
	"encoding/json"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Event types of the test-health webhooks (contract 4).
const (
	EventStatusChanged      = "test_case.status_changed"
	EventQuarantineSetting  = "test_case.quarantining_setting_changed"
	EventTicketLinked       = "test_case.ticket_linked"
	overrideUnspecifiedName = "UNSPECIFIED"
)

// StatusChanged is the payload of test_case.status_changed.
type StatusChanged struct {
	Type         string       `json:"type"`
	TestCase     TestCase     `json:"test_case"`
	StatusChange StatusChange `json:"status_change"`
}

// StatusChange is the before and after of a status change.
type StatusChange struct {
	PreviousStatus string `json:"previous_status"`
	CurrentStatus  Status `json:"current_status"`
}

// QuarantineSettingChanged is the payload of
// test_case.quarantining_setting_changed.
type QuarantineSettingChanged struct {
	Type     string            `json:"type"`
	TestCase TestCase          `json:"test_case"`
	Change   QuarantineSetting `json:"quarantine_setting_changed"`
}

// QuarantineSetting describes one change of a test's override.
type QuarantineSetting struct {
	Actor    Actor   `json:"actor"`
	Reason   *string `json:"reason"`
	Time     string  `json:"timestamp"`
	Previous string  `json:"previous_quarantining_setting"`
	Updated  string  `json:"updated_quarantining_setting"`
	// UpdatedUntil is when the updated override ends, when it has an end
	// (ours).
	UpdatedUntil string `json:"updated_quarantining_setting_until,omitempty"`
}

// Actor is who changed a setting.
type Actor struct {
	FullName string `json:"full_name"`
	Email    string `json:"email"`
}

// OverrideName spells an override as the API does: "" is UNSPECIFIED.
func OverrideName(o string) string {
	if o == "" {
		return overrideUnspecifiedName
	}
	return o
}

// StatusChangedEvent renders the outbox event for tc's status having
// changed from previous (tc holds the new status and its quarantine flag).
func (v Viewer) StatusChangedEvent(id string, tc testhealth.TestCase, s testhealth.Settings, previous string, now time.Time) (store.Event, error) {
	view := v.Full(tc, s, now)
	// The classifier's reason, which says what changed ("recovered (was flaky):
	// …"), not only the evidence a later read would show.
	view.Status.Reason = tc.Status.Reason
	return event(id, EventStatusChanged, now, StatusChanged{
		Type: EventStatusChanged, TestCase: view,
		StatusChange: StatusChange{PreviousStatus: previous, CurrentStatus: view.Status},
	})
}

// QuarantineSettingEvent renders the outbox event for tc's override having
// changed from previous to tc's.
func (v Viewer) QuarantineSettingEvent(id string, tc testhealth.TestCase, s testhealth.Settings, previous string, actor Actor, reason string, now time.Time) (store.Event, error) {
	var r *string
	if reason != "" {
		r = &reason
	}
	return event(id, EventQuarantineSetting, now, QuarantineSettingChanged{
		Type: EventQuarantineSetting, TestCase: v.Full(tc, s, now),
		Change: QuarantineSetting{
			Actor: actor, Reason: r, Time: Timestamp(now),
			Previous: OverrideName(previous), Updated: OverrideName(tc.QuarantineOverride),
			UpdatedUntil: OverrideUntil(tc),
		},
	})
}

// OverrideUntil spells when tc's override ends, "" when it has no end.
func OverrideUntil(tc testhealth.TestCase) string {
	if tc.QuarantineOverride == "" || tc.QuarantineUntil.IsZero() {
		return ""
	}
	return Timestamp(tc.QuarantineUntil)
}

// TicketLinked is the payload of the test_case.ticket_linked webhook.
type TicketLinked struct {
	Type      string   `json:"type"`
	Timestamp string   `json:"timestamp"`
	TestCase  TestCase `json:"test_case"`
	Ticket    Ticket   `json:"ticket"`
}

// Ticket names a linked ticket in events.
type Ticket struct {
	ID      string `json:"id"`
	HTMLURL string `json:"html_url"`
}

// TicketLinkedEvent renders the outbox event for tc's ticket (tc.Ticket)
// having been linked.
func (v Viewer) TicketLinkedEvent(id string, tc testhealth.TestCase, s testhealth.Settings, now time.Time) (store.Event, error) {
	return event(id, EventTicketLinked, now, TicketLinked{
		Type: EventTicketLinked, Timestamp: Timestamp(now),
		TestCase: v.Full(tc, s, now), Ticket: Ticket{ID: tc.Ticket.ID, HTMLURL: tc.Ticket.HTMLURL},
	})
}

func event(id, typ string, now time.Time, payload any) (store.Event, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return store.Event{}, errs.Wrap(errs.Internal, err, "internal error")
	}
	return store.Event{ID: id, Type: typ, Payload: string(b), CreatedAt: now}, nil
}
