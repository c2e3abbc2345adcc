package main

import (
	"fmt"
)

// repoClaim is `mainguard repo claim HOST/OWNER/NAME`.
func repoClaim(e *env, args []string) error {
	f := newFlags(cmdOf("repo claim"))
	org := f.orgFlag(e)
	force := f.Bool("force", false, "take the repository from the organization that claimed it")
	release := f.Bool("release", false, "withdraw the organization's claim instead")
	t := targetFlags(f, e)
	pos, err := f.parse(e, args, 1)
	if err != nil {
		return err
	}
	ref, err := parseRepo(pos[0])
	if err != nil {
		return err
	}
	a, err := t.open(e)
	if err != nil {
		return err
	}
	if *release {
		if err := a.Store.ReleaseRepo(e.ctx, *org, ref.Owner, ref.Name); err != nil {
			return t.failed(err)
		}
		fmt.Fprintf(e.stdout, "repository %s: no longer claimed by %s\n", ref, *org)
		return nil
	}
	if _, err := a.Store.ClaimRepo(e.ctx, *org, ref.Owner, ref.Name, *force); err != nil {
		return t.failed(err)
	}
	fmt.Fprintf(e.stdout, "repository %s belongs to %s: its merge queues, GitHub events and comment commands are %s's alone\n", ref, *org, *org)
	return nil
}
