package mergequeue

import "testing"

// TestPRIndexIsAMap holds prIndex to a map filled in the same order: dense
// numbers (a table), numbers far apart (a map), numbers below the table's
// first, and a table that turns into a map as entries are added.
func TestPRIndexIsAMap(t *testing.T) {
	for name, prs := range map[string][]int{
		"none":           nil,
		"dense":          {7, 8, 9, 12, 10},
		"sparse":         {5, 100_000, 7},
		"added below":    {50, 51, 52, 3, 49},
		"added far":      {1, 2, 3, 1000, 4},
		"added far down": {1000, 1001, 2, 1002},
		"repeated":       {4, 5, 4},
	} {
		for split := 0; split <= len(prs); split++ {
			entries := make([]Entry, split)
			want := map[int]int{}
			for i, pr := range prs[:split] {
				entries[i].PRNumber, want[pr] = pr, i
			}
			x := newPRIndex(entries)
			for i, pr := range prs[split:] {
				x.set(pr, split+i)
				want[pr] = split + i
			}
			for pr := -2; pr <= 100_002; pr++ {
				got, ok := x.get(pr)
				w, wok := want[pr]
				if got != w || ok != wok {
					t.Fatalf("%s, %d entries at first: PR %d at %d, %v; want %d, %v", name, split, pr, got, ok, w, wok)
				}
			}
		}
	}
}
