package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// TestRepoClaims: a repository is claimed by one organization, whatever
// the spelling; of two organizations claiming it at once one wins; another
// organization's claim is refused naming the holder, unless forced; only
// the holder releases it; an absent organization claims nothing.
func TestRepoClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, fixed)
	for _, org := range []string{"acme", "beta"} {
		mustOrg(t, s, org)
	}
	var wg sync.WaitGroup
	won := make([]bool, 2)
	for i, org := range []string{"acme", "beta"} {
		wg.Go(func() {
			_, err := s.ClaimRepo(ctx, org, "Acme", "Web", false)
			won[i] = err == nil
			if err != nil && !errs.Is(err, errs.Conflict) {
				t.Errorf("%s: %v", org, err)
			}
		})
	}
	wg.Wait()
	if won[0] == won[1] {
		t.Fatalf("two claims at once: %v, want one winner", won)
	}
	holder, loser := "acme", "beta"
	if won[1] {
		holder, loser = loser, holder
	}
	c, ok, err := s.RepoClaimOf(ctx, "acme", "web")
	if err != nil || !ok || c.Org != holder || c.Repo != "Acme/Web" || !c.ClaimedAt.Equal(t0) {
		t.Fatalf("claim: %+v %v %v", c, ok, err)
	}
	if _, err := s.ClaimRepo(ctx, holder, "acme", "web", false); err != nil {
		t.Errorf("the holder claims again: %v", err)
	}
	if _, err := s.ClaimRepo(ctx, loser, "acme", "web", false); !errs.Is(err, errs.Conflict) || errs.MessageOf(err) != `repository acme/web belongs to organization "`+holder+`" (--force moves it)` {
		t.Errorf("another organization: %v", err)
	}
	if err := s.ReleaseRepo(ctx, loser, "acme", "web"); !errs.Is(err, errs.NotFound) {
		t.Errorf("another organization releases: %v", err)
	}
	if _, err := s.ClaimRepo(ctx, loser, "acme", "web", true); err != nil {
		t.Errorf("forced: %v", err)
	}
	if c, _, _ := s.RepoClaimOf(ctx, "ACME", "WEB"); c.Org != loser {
		t.Errorf("after the forced claim: %+v", c)
	}
	if err := s.ReleaseRepo(ctx, loser, "acme", "web"); err != nil {
		t.Errorf("release: %v", err)
	}
	if _, ok, err := s.RepoClaimOf(ctx, "acme", "web"); ok || err != nil {
		t.Errorf("released, still claimed: %v %v", ok, err)
	}
	if _, err := s.ClaimRepo(ctx, "ghost", "acme", "web", false); !errs.Is(err, errs.NotFound) {
		t.Errorf("an absent organization: %v", err)
	}
}

// TestInstallations: an installation is recorded for one organization,
// listed with it, refused to another, and forgotten by its holder only.
func TestInstallations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, fixed)
	for _, org := range []string{"acme", "beta"} {
		mustOrg(t, s, org)
	}
	for _, id := range []int64{42, 7} {
		if _, err := s.AddInstallation(ctx, "acme", id, "acme-gh", false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddInstallation(ctx, "beta", 42, "", false); !errs.Is(err, errs.Conflict) || errs.MessageOf(err) != `installation 42 belongs to organization "acme" (--force moves it)` {
		t.Errorf("another organization: %v", err)
	}
	if _, err := s.AddInstallation(ctx, "acme", 0, "", false); !errs.Is(err, errs.Invalid) {
		t.Errorf("installation 0: %v", err)
	}
	list, err := s.Installations(ctx, "acme")
	if err != nil || len(list) != 2 || list[0].ID != 7 || list[1].ID != 42 || list[1].Account != "acme-gh" {
		t.Errorf("acme's installations: %+v %v", list, err)
	}
	if err := s.RemoveInstallation(ctx, "beta", 42); !errs.Is(err, errs.NotFound) {
		t.Errorf("another organization removes: %v", err)
	}
	if err := s.RemoveInstallation(ctx, "acme", 42); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.InstallationOf(ctx, 42); ok || err != nil {
		t.Errorf("removed, still there: %v %v", ok, err)
	}
}

// TestSessionRevocation: a revoked session is known as revoked until its
// expiry, which is its item's ttl.
func TestSessionRevocation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, fixed)
	if revoked, err := s.SessionRevoked(ctx, "s1"); revoked || err != nil {
		t.Fatalf("a session never signed out: %v %v", revoked, err)
	}
	if err := s.RevokeSession(ctx, "s1", t0.Add(8*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if revoked, err := s.SessionRevoked(ctx, "s1"); !revoked || err != nil {
		t.Errorf("signed out: %v %v", revoked, err)
	}
	if revoked, _ := s.SessionRevoked(ctx, "s2"); revoked {
		t.Error("another session is revoked")
	}
}

// TestGitHubCommandClaimedOnce: a comment's command is claimed once, and
// again once released.
func TestGitHubCommandClaimedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, nil)
	for i, want := range []bool{true, false} {
		if got, err := s.ClaimGitHubCommand(ctx, "acme/web#comment#9#t", time.Now()); err != nil || got != want {
			t.Errorf("claim %d: %v %v, want %v", i, got, err, want)
		}
	}
	if err := s.ReleaseGitHubCommand(ctx, "acme/web#comment#9#t"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClaimGitHubCommand(ctx, "acme/web#comment#9#t", time.Now()); !got {
		t.Error("a released command is not claimed again")
	}
}
