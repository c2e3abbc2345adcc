package main

import "fmt"

// orgCreate is `mainguard org create`.
func orgCreate(e *env, args []string) error {
	f := newFlags(cmdOf("org create"))
	slug := f.String("slug", "", "the organization's slug, as API calls name it (org_url_slug)")
	name := f.String("name", "", "display name")
	t := targetFlags(f, e)
	f.require("slug")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	a, err := t.open(e)
	if err != nil {
		return err
	}
	o, err := a.Store.CreateOrg(e.ctx, *slug, *name)
	if err != nil {
		return t.failed(err)
	}
	secret, tok, err := a.Store.CreateToken(e.ctx, o.Slug)
	if err != nil {
		return t.failed(err)
	}
	fmt.Fprintf(e.stdout, "organization %s created\ntoken %s (shown once, keep it secret):\n%s\n", o.Slug, tok.ID, secret)
	return nil
}
