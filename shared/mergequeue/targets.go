package mergequeue

import "hash/fnv"

// targetBits is the size of a Targets fingerprint. A pull request may name
// up to 100,000 targets; the snapshot keeps a fixed 128 bytes per entry.
const targetBits = 1024

// Targets are a pull request's impacted targets as the engine keeps them
// (contract 3.7, PARALLEL mode): ALL, or a fingerprint with one bit set per
// target name's hash. Two PRs whose target lists share a name always share
// a bit, so a dependency is never missed; two that share only a bit by
// chance are tested in one lane, which is correct, only less parallel.
type Targets struct {
	All  bool   `json:"a,omitempty"`
	Bits []byte `json:"b,omitempty"` // targetBits/8 bytes, or nil: no target at all
}

// NewTargets is the fingerprint of a setImpactedTargets call: all, or the
// names (an empty list intersects nothing).
func NewTargets(all bool, names []string) *Targets {
	t := &Targets{All: all}
	if all || len(names) == 0 {
		return t
	}
	t.Bits = make([]byte, targetBits/8)
	for _, n := range names {
		h := fnv.New32a()
		_, _ = h.Write([]byte(n))
		b := h.Sum32() % targetBits
		t.Bits[b/8] |= 1 << (b % 8)
	}
	return t
}

// Intersects reports whether two PRs' targets may overlap: ALL overlaps
// everything but an empty list; an empty list overlaps nothing.
func (t *Targets) Intersects(o *Targets) bool {
	if t == nil || o == nil {
		return true // unknown: assume the worst
	}
	if t.empty() || o.empty() {
		return false
	}
	if t.All || o.All {
		return true
	}
	return overlap(t.Bits, o.Bits)
}

func (t *Targets) empty() bool { return !t.All && len(t.Bits) == 0 }

func overlap(a, b []byte) bool {
	for i := range min(len(a), len(b)) {
		if a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}
