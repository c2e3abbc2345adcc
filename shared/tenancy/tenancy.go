// Package tenancy owns who may act on a GitHub repository in a deployment
// shared by many organizations: which organization a repository belongs
// to, and what permission a person has on it, as GitHub says. Both are
// read from elsewhere (the table, GitHub) and kept per copy for a short
// while.
//
// A repository belongs to one organization, in this order:
//
//  1. The organization an administrator claimed it for (`mainguard repo
//     claim`; store.ClaimRepo): the only way with a plain GitHub token,
//     and the administrator's word over an installation's.
//  2. With a GitHub App, the organization that recorded the installation
//     covering the repository (`mainguard org set --github-installation`,
//     or the App's setup flow in the web app; store.AddInstallation).
//
// Nothing else makes a repository an organization's: not a queue created
// on it, not an upload naming it. Every merge-queue endpoint, GitHub event
// and comment command reaches the owner's queues only; to any other
// organization the repository does not exist.
//
// The owner of a repository costs one GetItem of its claim item (1 read
// unit), and with an App, when there is no claim, the installation's
// GitHub lookup (cached by the GitHub client for the copy's life) and a
// GetItem of the installation item (1 read unit); the answer is kept for
// TTL (AUTH_CACHE_SECONDS, as tokens are), an absent owner for at most 10
// seconds, so a new claim works at once and a moved one within TTL.
package tenancy

import (
	"context"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/ttlcache"
)

// Store is what tenancy reads of the table; *store.Store implements it.
type Store interface {
	RepoClaimOf(ctx context.Context, owner, name string) (store.RepoClaim, bool, error)
	InstallationOf(ctx context.Context, id int64) (store.Installation, bool, error)
}

var _ Store = (*store.Store)(nil)

// Installations finds the GitHub App installation covering a repository;
// *github.Client implements it when it is an App.
type Installations interface {
	Installation(ctx context.Context, repo github.Repo) (int64, error)
}

// Permissions reads a person's permission on a repository (admin,
// maintain, write, triage, read or none); *github.Client implements it.
type Permissions interface {
	Permission(ctx context.Context, repo github.Repo, user string) (string, error)
}

// Tenancy answers who owns a repository and what a person may do on it.
// Its fields are set once; it is safe for concurrent use.
type Tenancy struct {
	Store Store
	// Installations is nil when the deployment has no GitHub App: then
	// claims alone give repositories owners.
	Installations Installations
	// GitHub reads people's permissions; nil when GitHub is not configured.
	GitHub Permissions
	// TTL is how long an owner is kept (AUTH_CACHE_SECONDS).
	TTL time.Duration
	Now func() time.Time

	owners ttlcache.Cache[string]
	perms  ttlcache.Cache[string]
}

func (t *Tenancy) now() time.Time {
	if t.Now == nil {
		return time.Now()
	}
	return t.Now()
}

// unownedTTL is how long a repository without an owner is remembered so:
// a claim made meanwhile works after at most this long.
const unownedTTL = 10 * time.Second

// PermissionTTL is how long a person's permission is trusted: someone
// whose access is taken away on GitHub loses it here within it.
const PermissionTTL = time.Minute

// Owner is the organization repo belongs to; "" when none.
func (t *Tenancy) Owner(ctx context.Context, repo repository.Ref) (string, error) {
	k := strings.ToLower(repo.Owner + "/" + repo.Name)
	return t.owners.Get(k, t.now(), func() (string, time.Duration, error) {
		org, err := t.owner(ctx, repo)
		if err != nil || org == "" {
			return "", min(unownedTTL, t.TTL), err
		}
		return org, t.TTL, nil
	})
}

func (t *Tenancy) owner(ctx context.Context, repo repository.Ref) (string, error) {
	c, ok, err := t.Store.RepoClaimOf(ctx, repo.Owner, repo.Name)
	if err != nil || ok {
		return c.Org, err
	}
	if t.Installations == nil {
		return "", nil
	}
	id, err := t.Installations.Installation(ctx, github.Repo{Owner: repo.Owner, Name: repo.Name})
	if errs.Is(err, errs.NotFound) {
		return "", nil // the App is not installed there
	}
	if err != nil {
		return "", err
	}
	in, _, err := t.Store.InstallationOf(ctx, id)
	return in.Org, err
}

// Owns reports whether org owns repo.
func (t *Tenancy) Owns(ctx context.Context, org string, repo repository.Ref) (bool, error) {
	owner, err := t.Owner(ctx, repo)
	return err == nil && owner != "" && strings.EqualFold(owner, org), err
}

// Check is nil when org owns repo, else the 404 every merge-queue endpoint
// answers for it: the same for a repository of another organization, one
// of none, and one that does not exist.
func (t *Tenancy) Check(ctx context.Context, org string, repo repository.Ref) error {
	ok, err := t.Owns(ctx, org, repo)
	if err != nil {
		return err
	}
	if !ok {
		return NotOwned(repo)
	}
	return nil
}

// NotOwned is the answer for a repository that is not the organization's.
func NotOwned(repo repository.Ref) error {
	return errs.E(errs.NotFound, "no repository %s in this organization", repo)
}

// Permission is login's permission on repo as GitHub reports it, kept for
// PermissionTTL: admin, maintain, write, triage, read or none. errs.Unavailable
// when GitHub is not configured.
func (t *Tenancy) Permission(ctx context.Context, repo github.Repo, login string) (string, error) {
	if t.GitHub == nil {
		return "", errs.E(errs.Unavailable, "GitHub is not configured: set GITHUB_TOKEN or GITHUB_APP_ID")
	}
	k := strings.ToLower(repo.String()) + "\x00" + strings.ToLower(login)
	return t.perms.GetFor(k, t.now(), PermissionTTL, func() (string, error) {
		perm, err := t.GitHub.Permission(ctx, repo, login)
		if errs.Is(err, errs.NotFound) {
			// No such user, or a repository the App cannot see: nothing
			// there for them either.
			return "none", nil
		}
		return perm, err
	})
}

// CanWrite reports whether a permission lets a person command the queue
// and change what the web app changes: write, maintain or admin.
func CanWrite(perm string) bool {
	return perm == "admin" || perm == "maintain" || perm == "write"
}

// CanRead reports whether a permission lets a person see a repository.
func CanRead(perm string) bool {
	return CanWrite(perm) || perm == "triage" || perm == "read"
}
