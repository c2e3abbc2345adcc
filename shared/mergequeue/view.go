package mergequeue

import (
	"cmp"
	"slices"
)

// QueueOrder lists the submitted entries in queue order, as
// getQueue.enqueuedPullRequests shows them: the testing line first (by
// position), then PENDING entries by priority and submit order. NOT_READY
// and finished entries are left out.
func QueueOrder(s Snapshot) []Entry {
	var line, waiting []Entry
	for _, e := range s.Entries {
		switch {
		case !e.Active() || e.State == NotReady:
		case e.Position > 0:
			line = append(line, e)
		default:
			waiting = append(waiting, e)
		}
	}
	slices.SortFunc(line, func(a, b Entry) int { return cmp.Compare(a.Position, b.Position) })
	slices.SortFunc(waiting, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Seq, b.Seq))
	})
	return append(line, waiting...)
}

// Readiness is the readiness object of contract 3.2.
type Readiness struct {
	HasImpactedTargets      bool
	RequiresImpactedTargets bool
	DoesBaseBranchMatch     bool
	GitHubMergeability      Mergeability
}

// ReadinessOf is e's readiness in queue q. Impacted targets are not kept
// by the engine yet: the caller fills HasImpactedTargets from the store.
func ReadinessOf(e Entry, q Queue) Readiness {
	m := e.PR.Mergeability
	if m == "" {
		m = MergeabilityNone
	}
	return Readiness{
		RequiresImpactedTargets: q.Mode == ModeParallel,
		DoesBaseBranchMatch:     e.PR.BaseBranch == q.Branch,
		GitHubMergeability:      m,
	}
}
