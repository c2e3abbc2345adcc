package main

import "fmt"

// orgSet is `mainguard org set`.
func orgSet(e *env, args []string) error {
	f := newFlags(cmdOf("org set"))
	org := f.orgFlag(e)
	enumCase := f.String("enum-case", "", "how merge-queue answers spell enum values for this organization: lower (as the commercial Terraform provider requires), upper, or default (the deployment's ENUM_CASE)")
	t := targetFlags(f, e)
	f.require("enum-case")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	stored := *enumCase
	switch *enumCase {
	case "lower", "upper":
	case "default":
		stored = ""
	default:
		return usageError(fmt.Sprintf("--enum-case must be lower, upper or default, not %q", *enumCase))
	}
	a, err := t.open(e)
	if err != nil {
		return err
	}
	if err := a.Store.SetOrgEnumCase(e.ctx, *org, stored); err != nil {
		return t.failed(err)
	}
	fmt.Fprintf(e.stdout, "organization %s: merge-queue enum values in %s case\n", *org, *enumCase)
	return nil
}
