package main

import (
	"fmt"
	"time"

	"github.com/mainguard/mainguard/shared/webhooks"
)

// webhookRotate is `mainguard webhook rotate-secret`.
func webhookRotate(e *env, args []string) error {
	f := newFlags(cmdOf("webhook rotate-secret"))
	org := f.orgFlag(e)
	endpoint := f.String("endpoint", "", "the endpoint's id (ep_…)")
	t := targetFlags(f, e)
	f.require("endpoint")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	ep, err := a.Store.RotateWebhookSecret(e.ctx, *org, *endpoint, webhooks.NewSecret())
	if err != nil {
		return t.failed(err)
	}
	fmt.Fprintf(e.stdout, "endpoint %s of %s has a new signing secret (shown once, keep it secret):\n%s\n", ep.ID, *org, ep.Secret)
	if ep.PreviousUntil != nil {
		fmt.Fprintf(e.stdout, "deliveries are signed with the previous secret too until %s\n", ep.PreviousUntil.UTC().Format(time.RFC3339))
	}
	return nil
}
