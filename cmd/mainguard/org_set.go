package main

import (
	"fmt"
	"strconv"
)

// orgSet is `mainguard org set`.
func orgSet(e *env, args []string) error {
	f := newFlags(cmdOf("org set"))
	org := f.orgFlag(e)
	enumCase := f.String("enum-case", "", "how merge-queue answers spell enum values for this organization: lower (as the commercial Terraform provider requires), upper, or default (the deployment's ENUM_CASE)")
	var add, remove []int64
	f.Func("github-installation", "record a GitHub App installation id as the organization's: every repository it covers is then the organization's (repeatable)", installationFlag(&add))
	f.Func("remove-github-installation", "forget a GitHub App installation id of the organization (repeatable)", installationFlag(&remove))
	force := f.Bool("force", false, "with --github-installation: take the installation from the organization that recorded it")
	t := targetFlags(f, e)
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	stored := *enumCase
	switch *enumCase {
	case "lower", "upper", "":
	case "default":
		stored = ""
	default:
		return usageError(fmt.Sprintf("--enum-case must be lower, upper or default, not %q", *enumCase))
	}
	if *enumCase == "" && len(add) == 0 && len(remove) == 0 {
		return usageError("org set needs --enum-case, --github-installation or --remove-github-installation (see `mainguard org set --help`)")
	}
	a, err := t.open(e)
	if err != nil {
		return err
	}
	if *enumCase != "" {
		if err := a.Store.SetOrgEnumCase(e.ctx, *org, stored); err != nil {
			return t.failed(err)
		}
		fmt.Fprintf(e.stdout, "organization %s: merge-queue enum values in %s case\n", *org, *enumCase)
	}
	for _, id := range add {
		if _, err := a.Store.AddInstallation(e.ctx, *org, id, "", *force); err != nil {
			return t.failed(err)
		}
		fmt.Fprintf(e.stdout, "organization %s: GitHub App installation %d is its own (every repository it covers)\n", *org, id)
	}
	for _, id := range remove {
		if err := a.Store.RemoveInstallation(e.ctx, *org, id); err != nil {
			return t.failed(err)
		}
		fmt.Fprintf(e.stdout, "organization %s: GitHub App installation %d forgotten\n", *org, id)
	}
	return nil
}

// installationFlag is a flag.Func reading installation ids into *dst.
func installationFlag(dst *[]int64) func(string) error {
	return func(v string) error {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("must be an installation id (a positive integer), got %q", v)
		}
		*dst = append(*dst, id)
		return nil
	}
}
