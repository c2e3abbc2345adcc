package main

import (
	"fmt"

	"github.com/mainguard/mainguard/shared/api"
)

// tokenList is `mainguard token list`.
func tokenList(e *env, args []string) error {
	f := newFlags(cmdOf("token list"))
	org := f.orgFlag(e)
	t := targetFlags(f, e)
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	toks, err := a.Store.ListTokens(e.ctx, *org)
	if err != nil {
		return t.failed(err)
	}
	for _, tok := range toks {
		state := "active"
		if tok.Revoked() {
			state = "revoked " + tok.RevokedAt.Format("2006-01-02T15:04:05Z")
		}
		fmt.Fprintf(e.stdout, "%s\tcreated %s\tscopes %s\t%s\n", tok.ID, tok.CreatedAt.Format("2006-01-02T15:04:05Z"), api.ScopesString(tok.Scopes), state)
	}
	return nil
}
