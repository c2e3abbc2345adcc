package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/store"
)

// eventTypes are the webhook event types an endpoint can filter on
// (contract 4).
var eventTypes = func() []string {
	types := []string{healthview.EventStatusChanged, healthview.EventQuarantineSetting, healthview.EventTicketLinked}
	for _, kind := range []string{"pull_request", "pull_request_batch"} {
		for _, action := range []string{"submitted", "queued", "testing", "pending_failure", "failed", "canceled", "merged"} {
			types = append(types, kind+"."+action)
		}
	}
	return types
}()

// parseEventTypes reads --events: known types, each once; empty is every
// type.
func parseEventTypes(v string) ([]string, error) {
	var types []string
	for t := range strings.SplitSeq(v, ",") {
		t = strings.TrimSpace(t)
		if t == "" || slices.Contains(types, t) {
			continue
		}
		if !slices.Contains(eventTypes, t) {
			return nil, usageError(fmt.Sprintf("--events: unknown event type %q; the types are %s", t, strings.Join(eventTypes, ", ")))
		}
		types = append(types, t)
	}
	return types, nil
}

func eventsOf(ep store.WebhookEndpoint) string {
	if len(ep.EventTypes) == 0 {
		return "all events"
	}
	return "events " + strings.Join(ep.EventTypes, ",")
}

// attemptLine is one delivery attempt: time, event id, type, attempt,
// status, latency, error.
func attemptLine(a store.DeliveryAttempt) string {
	attempt := fmt.Sprintf("attempt %d", a.Attempt)
	if a.Cycle > 0 {
		attempt += fmt.Sprintf(" (replay %d)", a.Cycle)
	}
	status := "no answer"
	if a.StatusCode != 0 {
		status = fmt.Sprintf("HTTP %d", a.StatusCode)
	}
	line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", a.At.UTC().Format("2006-01-02T15:04:05.000Z"), a.EventID, a.EventType,
		attempt, status, a.Latency.Round(time.Millisecond))
	if a.Error != "" {
		line += "\t" + a.Error
	}
	return line
}
