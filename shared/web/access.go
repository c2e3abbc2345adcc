package web

import (
	"context"
	"slices"
	"strings"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/tenancy"
)

// What a signed-in person may see and do of a repository. With a token,
// the token's scopes say it, as they do for the API: pages need read
// (page checks it), and each action the scope of the endpoint it stands
// for. With GitHub, the person's permission on the repository says it, as
// GitHub reports it (tenancy.Permission, a minute per copy): a repository
// they cannot read is not found, exactly as one that does not exist, and
// changing anything needs write.

// seeRepo is nil when s may see repo's pages, else NotFound.
func (w *Web) seeRepo(ctx context.Context, s session, repo repository.Ref) error {
	if s.Login == "" {
		return nil
	}
	perm, err := w.permission(ctx, s, repo)
	if err != nil {
		return err
	}
	if !tenancy.CanRead(perm) {
		return errs.E(errs.NotFound, "@%s cannot read %s", s.Login, repo)
	}
	return nil
}

// allow is nil when s may do what to repo: with a token, when it holds
// scope; with GitHub, when the person can write to repo (NotFound when
// they cannot even read it; 403 with a sentence when they only read).
func (w *Web) allow(ctx context.Context, s session, repo repository.Ref, scope api.Scope, what string) error {
	if s.Login == "" {
		return s.principal.Require(scope, what)
	}
	perm, err := w.permission(ctx, s, repo)
	if err != nil {
		return err
	}
	switch {
	case !tenancy.CanRead(perm):
		return errs.E(errs.NotFound, "@%s cannot read %s", s.Login, repo)
	case !tenancy.CanWrite(perm):
		return errs.E(errs.Forbidden, "%s needs write access to %s on GitHub; @%s has %s access", what, repo.Owner+"/"+repo.Name, s.Login, perm)
	}
	return nil
}

// permission is the GitHub session's permission on repo: none on a host
// that is not the deployment's GitHub.
func (w *Web) permission(ctx context.Context, s session, repo repository.Ref) (string, error) {
	if !slices.ContainsFunc(w.Hosts, func(h string) bool { return strings.EqualFold(h, repo.Host) }) {
		return "none", nil
	}
	return w.Queues.Tenancy.Permission(ctx, github.Repo{Owner: repo.Owner, Name: repo.Name}, s.Login)
}
