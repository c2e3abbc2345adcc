package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
)

// openStore opens the table the environment names, creating it when it is a
// DynamoDB Local one that does not exist yet (deployed, CloudFormation owns it).
func openStore(ctx context.Context, getenv func(string) string) (*store.Store, error) {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	db, err := app.DynamoClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.DynamoEndpoint != "" {
		if _, err := store.EnsureTable(ctx, db, cfg.TableName); err != nil {
			return nil, err
		}
	}
	return store.New(db, cfg.TableName, nil), nil
}

func admin(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) < 2 {
		return usageError(fmt.Sprintf("%s needs a subcommand; see `mainguard help`", args[0]))
	}
	cmd := args[0] + " " + args[1]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	org := fs.String("org", "local", "organization slug")
	slug := fs.String("slug", "", "organization slug")
	name := fs.String("name", "", "display name")
	token := fs.String("token", "", "token id (tok_…) or the token itself (mg_…)")
	jira := fs.String("jira-base-url", "", "Jira base URL, e.g. https://acme.atlassian.net")
	linear := fs.String("linear-workspace", "", "Linear workspace slug")
	branch := fs.String("default-branch", "", "default branch (main unless set)")
	rest := args[2:]
	var positional []string
	// Flags may follow a positional argument (repo set HOST/OWNER/NAME --…).
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return usageError(fmt.Sprintf("%s: %v", cmd, err))
		}
		rest = fs.Args()
		if len(rest) > 0 {
			positional = append(positional, rest[0])
			rest = rest[1:]
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	s, err := openStore(ctx, getenv)
	if err != nil {
		return err
	}
	switch cmd {
	case "org create":
		if *slug == "" {
			return usageError("org create needs --slug")
		}
		o, err := s.CreateOrg(ctx, *slug, *name)
		if err != nil {
			return clientError(err)
		}
		secret, tok, err := s.CreateToken(ctx, o.Slug)
		if err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "organization %s created\ntoken %s (shown once, keep it secret):\n%s\n", o.Slug, tok.ID, secret)
	case "token create":
		secret, tok, err := s.CreateToken(ctx, *org)
		if err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "token %s for %s (shown once, keep it secret):\n%s\n", tok.ID, *org, secret)
	case "token list":
		toks, err := s.ListTokens(ctx, *org)
		if err != nil {
			return clientError(err)
		}
		for _, t := range toks {
			state := "active"
			if t.Revoked() {
				state = "revoked " + t.RevokedAt.Format("2006-01-02T15:04:05Z")
			}
			fmt.Fprintf(stdout, "%s\tcreated %s\t%s\n", t.ID, t.CreatedAt.Format("2006-01-02T15:04:05Z"), state)
		}
	case "token revoke":
		if *token == "" {
			return usageError("token revoke needs --token ID|SECRET")
		}
		t, err := s.RevokeToken(ctx, *org, *token)
		if err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "token %s of %s revoked\n", t.ID, *org)
	case "repo set":
		if len(positional) != 1 {
			return usageError("repo set needs one HOST/OWNER/NAME")
		}
		ref, err := store.ParseRepo(positional[0])
		if err != nil {
			return clientError(err)
		}
		if set["jira-base-url"] && set["linear-workspace"] {
			return usageError("a repository links tickets to one tracker: give --jira-base-url or --linear-workspace, not both")
		}
		var settings store.RepoSettings
		empty := ""
		if set["jira-base-url"] {
			if *jira != "" && !strings.HasPrefix(*jira, "https://") && !strings.HasPrefix(*jira, "http://") {
				return usageError("--jira-base-url must be an http(s) address")
			}
			settings.JiraBaseURL, settings.LinearWorkspace = jira, &empty
		}
		if set["linear-workspace"] {
			settings.LinearWorkspace, settings.JiraBaseURL = linear, &empty
		}
		if set["default-branch"] {
			settings.DefaultBranch = branch
		}
		r, err := s.UpdateRepo(ctx, *org, ref, settings)
		if err != nil {
			return clientError(err)
		}
		tracker := "none"
		switch {
		case r.JiraBaseURL != "":
			tracker = "jira " + r.JiraBaseURL
		case r.LinearWorkspace != "":
			tracker = "linear " + r.LinearWorkspace
		}
		fmt.Fprintf(stdout, "repository %s of %s: default branch %s, tracker %s\n", r.Ref, *org, r.Branch(), tracker)
	default:
		return usageError(fmt.Sprintf("unknown command %q; see `mainguard help`", cmd))
	}
	return nil
}

// clientError keeps a domain error's message and drops SDK detail unless
// the error is unexpected.
func clientError(err error) error {
	if msg := errs.MessageOf(err); msg != "" && errs.CodeOf(err) != errs.Internal {
		return fmt.Errorf("%s", msg)
	}
	return err
}
