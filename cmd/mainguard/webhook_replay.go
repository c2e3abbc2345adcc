package main

import "fmt"

// webhookReplay is `mainguard webhook replay`.
func webhookReplay(e *env, args []string) error {
	f := newFlags(cmdOf("webhook replay"))
	org := f.orgFlag(e)
	event := f.String("event", "", "the event's id (msg_…)")
	t := targetFlags(f, e)
	f.require("event")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	ev, err := a.Store.ReplayEvent(e.ctx, *org, *event)
	if err != nil {
		return t.failed(err)
	}
	fmt.Fprintf(e.stdout, "event %s (%s) of %s queued again (replay %d): every endpoint subscribed to it that existed when it happened receives it at the next delivery pass, with the same webhook-id\n",
		ev.ID, ev.Type, *org, ev.Cycle)
	return nil
}
