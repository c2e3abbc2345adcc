package main

import (
	"fmt"

	"github.com/mainguard/mainguard/shared/webhooks"
)

// webhookAdd is `mainguard webhook add`.
func webhookAdd(e *env, args []string) error {
	f := newFlags(cmdOf("webhook add"))
	org := f.orgFlag(e)
	url := f.String("url", "", "the endpoint's address (http or https)")
	events := f.String("events", "", "event types to send, comma-separated (default: all)")
	t := targetFlags(f, e)
	f.require("url")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	types, err := parseEventTypes(*events)
	if err != nil {
		return err
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	ep, err := webhooks.NewEndpoint(e.ctx, a.Guard, *url, types)
	if err != nil {
		return clientError(err)
	}
	if ep, err = a.Store.AddWebhookEndpoint(e.ctx, *org, ep); err != nil {
		return t.failed(err)
	}
	fmt.Fprintf(e.stdout, "endpoint %s of %s added: %s (%s)\nsigning secret (shown once, keep it secret):\n%s\n",
		ep.ID, *org, ep.URL, eventsOf(ep), ep.Secret)
	return nil
}
