package main

import (
	"fmt"
	"time"
)

// webhookList is `mainguard webhook list`.
func webhookList(e *env, args []string) error {
	f := newFlags(cmdOf("webhook list"))
	org := f.orgFlag(e)
	t := targetFlags(f, e)
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	eps, err := a.Store.WebhookEndpoints(e.ctx, *org)
	if err != nil {
		return t.failed(err)
	}
	now := e.now()
	for _, ep := range eps {
		line := fmt.Sprintf("%s\t%s\t%s\tcreated %s", ep.ID, ep.URL, eventsOf(ep), ep.CreatedAt.Format(time.RFC3339))
		if len(ep.Secrets(now)) > 1 {
			line += "\tprevious secret signs until " + ep.PreviousUntil.UTC().Format(time.RFC3339)
		}
		fmt.Fprintln(e.stdout, line)
	}
	return nil
}
