package main

import "fmt"

// webhookRemove is `mainguard webhook remove`.
func webhookRemove(e *env, args []string) error {
	f := newFlags(cmdOf("webhook remove"))
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
	if err := a.Store.RemoveWebhookEndpoint(e.ctx, *org, *endpoint); err != nil {
		return t.failed(err)
	}
	fmt.Fprintf(e.stdout, "endpoint %s of %s removed; it receives nothing more\n", *endpoint, *org)
	return nil
}
