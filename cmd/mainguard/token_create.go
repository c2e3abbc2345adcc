package main

import "fmt"

// tokenCreate is `mainguard token create`.
func tokenCreate(e *env, args []string) error {
	f := newFlags(cmdOf("token create"))
	org := f.orgFlag(e)
	quiet := f.Bool("quiet", false, "print only the token, for scripts: export MAINGUARD_TOKEN=$(mainguard token create --org S --quiet)")
	t := targetFlags(f, e)
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	a, err := t.open(e)
	if err != nil {
		return err
	}
	secret, tok, err := a.Store.CreateToken(e.ctx, *org)
	if err != nil {
		return t.failed(err)
	}
	if *quiet {
		fmt.Fprintln(e.stdout, secret)
		return nil
	}
	fmt.Fprintf(e.stdout, "token %s for %s (shown once, keep it secret):\n%s\n", tok.ID, *org, secret)
	return nil
}
