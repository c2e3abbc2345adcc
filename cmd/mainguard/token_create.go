package main

import (
	"fmt"

	"github.com/mainguard/mainguard/shared/api"
)

// tokenCreate is `mainguard token create`.
func tokenCreate(e *env, args []string) error {
	f := newFlags(cmdOf("token create"))
	org := f.orgFlag(e)
	quiet := f.Bool("quiet", false, "print only the token, for scripts: export MAINGUARD_TOKEN=$(mainguard token create --org S --scope read,queue --quiet)")
	var scopes []string
	f.Func("scope", "what the token may do: upload (the uploader's endpoints only: for CI), read, queue (run merge queues) or admin (everything); several, repeated or comma-separated (required)", func(v string) error {
		scopes = append(scopes, v)
		return nil
	})
	t := targetFlags(f, e)
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	list, err := api.ParseScopes(scopes)
	if err != nil {
		return usageError("--scope: " + err.Error())
	}
	if len(list) == 0 {
		return usageError("token create needs --scope: upload, read, queue or admin, or several (see `mainguard token create --help`)")
	}
	a, err := t.open(e)
	if err != nil {
		return err
	}
	secret, tok, err := a.Store.CreateScopedToken(e.ctx, *org, list)
	if err != nil {
		return t.failed(err)
	}
	if *quiet {
		fmt.Fprintln(e.stdout, secret)
		return nil
	}
	fmt.Fprintf(e.stdout, "token %s for %s, scopes %s (shown once, keep it secret):\n%s\n", tok.ID, *org, api.ScopesString(tok.Scopes), secret)
	return nil
}
