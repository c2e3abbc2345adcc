package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/flakyapi"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/webhooks"
)

// eventTypes are the webhook event types an endpoint can filter on
// (contract 4).
var eventTypes = func() []string {
	types := []string{flakyapi.EventStatusChanged, flakyapi.EventQuarantineSetting, flakyapi.EventTicketLinked}
	for _, kind := range []string{"pull_request", "pull_request_batch"} {
		for _, action := range []string{"submitted", "queued", "testing", "pending_failure", "failed", "canceled", "merged"} {
			types = append(types, kind+"."+action)
		}
	}
	return types
}()

// webhookGuard checks endpoint addresses when they are added; the
// deliverer's dialer checks again on every delivery.
var webhookGuard = webhooks.Guard{}

// webhook runs `mainguard webhook <subcommand>`: the organization's
// endpoints, their secrets, their delivery log and replays (contract 4).
func webhook(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		return usageError("webhook needs a subcommand: add, list, remove, rotate-secret, deliveries or replay")
	}
	sub := args[0]
	fs := flag.NewFlagSet("webhook "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	org := fs.String("org", "local", "organization slug")
	url := fs.String("url", "", "endpoint URL (http or https)")
	eventsFlag := fs.String("events", "", "event types to send, comma-separated (default: all)")
	endpoint := fs.String("endpoint", "", "endpoint id (ep_…)")
	event := fs.String("event", "", "event id (msg_…)")
	limit := fs.Int("limit", 50, "how many attempts to show, most recent first")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError(fmt.Sprintf("webhook %s: %v", sub, err))
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("webhook %s: unexpected argument %q", sub, fs.Arg(0)))
	}
	need := func(name, value string) error {
		if value == "" {
			return usageError(fmt.Sprintf("webhook %s needs --%s", sub, name))
		}
		return nil
	}
	// Check the command line before opening the table.
	var types []string
	switch sub {
	case "add":
		if err := need("url", *url); err != nil {
			return err
		}
		var err error
		if types, err = parseEventTypes(*eventsFlag); err != nil {
			return err
		}
	case "remove", "rotate-secret", "deliveries":
		if err := need("endpoint", *endpoint); err != nil {
			return err
		}
		if sub == "deliveries" && (*limit < 1 || *limit > 1000) {
			return usageError("--limit must be from 1 to 1000")
		}
	case "replay":
		if err := need("event", *event); err != nil {
			return err
		}
	case "list":
	default:
		return usageError(fmt.Sprintf("unknown command \"webhook %s\"; see `mainguard help`", sub))
	}

	s, err := openStore(ctx, getenv)
	if err != nil {
		return err
	}
	switch sub {
	case "add":
		ep, err := webhooks.NewEndpoint(ctx, webhookGuard, *url, types)
		if err != nil {
			return clientError(err)
		}
		if ep, err = s.AddWebhookEndpoint(ctx, *org, ep); err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "endpoint %s of %s added: %s (%s)\nsigning secret (shown once, keep it secret):\n%s\n",
			ep.ID, *org, ep.URL, eventsOf(ep), ep.Secret)
	case "list":
		eps, err := s.WebhookEndpoints(ctx, *org)
		if err != nil {
			return clientError(err)
		}
		now := time.Now()
		for _, ep := range eps {
			line := fmt.Sprintf("%s\t%s\t%s\tcreated %s", ep.ID, ep.URL, eventsOf(ep), ep.CreatedAt.Format(time.RFC3339))
			if len(ep.Secrets(now)) > 1 {
				line += "\tprevious secret signs until " + ep.PreviousUntil.UTC().Format(time.RFC3339)
			}
			fmt.Fprintln(stdout, line)
		}
	case "remove":
		if err := s.RemoveWebhookEndpoint(ctx, *org, *endpoint); err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "endpoint %s of %s removed; it receives nothing more\n", *endpoint, *org)
	case "rotate-secret":
		ep, err := s.RotateWebhookSecret(ctx, *org, *endpoint, webhooks.NewSecret())
		if err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "endpoint %s of %s has a new signing secret (shown once, keep it secret):\n%s\n", ep.ID, *org, ep.Secret)
		if ep.PreviousUntil != nil {
			fmt.Fprintf(stdout, "deliveries are signed with the previous secret too until %s\n", ep.PreviousUntil.UTC().Format(time.RFC3339))
		}
	case "deliveries":
		// The endpoint's existence first: an unknown one is an error, not
		// an empty log.
		if _, err := s.WebhookEndpoint(ctx, *org, *endpoint); err != nil {
			return clientError(err)
		}
		log, err := s.EndpointAttempts(ctx, *org, *endpoint, int32(*limit))
		if err != nil {
			return clientError(err)
		}
		if len(log) == 0 {
			fmt.Fprintf(stdout, "no deliveries to %s yet\n", *endpoint)
		}
		for _, a := range log {
			fmt.Fprintln(stdout, attemptLine(a))
		}
	case "replay":
		ev, err := s.ReplayEvent(ctx, *org, *event)
		if err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "event %s (%s) of %s queued again (replay %d): every endpoint subscribed to it receives it at the next delivery pass, with the same webhook-id\n",
			ev.ID, ev.Type, *org, ev.Cycle)
	}
	return nil
}

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
