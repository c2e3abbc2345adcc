package main

import "fmt"

// tokenRevoke is `mainguard token revoke`.
func tokenRevoke(e *env, args []string) error {
	f := newFlags(cmdOf("token revoke"))
	org := f.orgFlag(e)
	token := f.String("token", "", "the token's id (tok_…) or the token itself (mg_…)")
	t := targetFlags(f, e)
	f.require("token")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	tok, err := a.Store.RevokeToken(e.ctx, *org, *token)
	if err != nil {
		return t.failed(err)
	}
	fmt.Fprintf(e.stdout, "token %s of %s revoked\n", tok.ID, *org)
	return nil
}
