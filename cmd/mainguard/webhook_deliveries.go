package main

import "fmt"

// webhookDeliveries is `mainguard webhook deliveries`.
func webhookDeliveries(e *env, args []string) error {
	f := newFlags(cmdOf("webhook deliveries"))
	org := f.orgFlag(e)
	endpoint := f.String("endpoint", "", "the endpoint's id (ep_…)")
	limit := f.Int("limit", 50, "how many attempts to show, most recent first (1 to 1000)")
	t := targetFlags(f, e)
	f.require("endpoint")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	if *limit < 1 || *limit > 1000 {
		return usageError("--limit must be from 1 to 1000")
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	// The endpoint's existence first: an unknown one is an error, not an
	// empty log.
	if _, err := a.Store.WebhookEndpoint(e.ctx, *org, *endpoint); err != nil {
		return t.failed(err)
	}
	log, err := a.Store.EndpointAttempts(e.ctx, *org, *endpoint, int32(*limit))
	if err != nil {
		return t.failed(err)
	}
	if len(log) == 0 {
		fmt.Fprintf(e.stdout, "no deliveries to %s yet\n", *endpoint)
	}
	for _, at := range log {
		fmt.Fprintln(e.stdout, attemptLine(at))
	}
	return nil
}
