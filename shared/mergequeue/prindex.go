package mergequeue

// prIndex finds an entry of a snapshot by its PR number (the machine's
// entryByPR). A repository numbers its pull requests in order and a queue
// holds about a day of them, so their numbers lie close together: a table
// from the lowest number up finds one by indexing, without the hashing a
// map does on every insert and lookup (building the index is part of every
// step). Numbers too far apart for a table (more than four slots an entry)
// go into a map instead.
type prIndex struct {
	lo    int     // the PR number of table[0]
	table []int32 // 1 + the entry's index, by PR number − lo; 0: none
	m     map[int]int
}

// newPRIndex indexes entries; of entries of the same PR (there are none in
// a valid snapshot) the last wins, as in a map filled in order.
func newPRIndex(entries []Entry) prIndex {
	var x prIndex
	if len(entries) == 0 {
		return x
	}
	lo, hi := entries[0].PRNumber, entries[0].PRNumber
	for i := range entries {
		lo, hi = min(lo, entries[i].PRNumber), max(hi, entries[i].PRNumber)
	}
	if !dense(hi-lo+1, len(entries)) {
		x.m = make(map[int]int, len(entries))
		for i := range entries {
			x.m[entries[i].PRNumber] = i
		}
		return x
	}
	x.lo, x.table = lo, make([]int32, hi-lo+1)
	for i := range entries {
		x.table[entries[i].PRNumber-lo] = int32(i + 1)
	}
	return x
}

// dense reports whether a table of size slots suits n entries.
func dense(size, n int) bool { return size <= 4*n+64 }

func (x *prIndex) get(pr int) (int, bool) {
	if x.m != nil {
		i, ok := x.m[pr]
		return i, ok
	}
	k := pr - x.lo
	if k < 0 || k >= len(x.table) || x.table[k] == 0 {
		return 0, false
	}
	return int(x.table[k]) - 1, true
}

// set records that PR pr's entry is at index i, the last of the entries.
func (x *prIndex) set(pr, i int) {
	if x.m == nil {
		if len(x.table) == 0 {
			x.lo = pr
		}
		k := pr - x.lo
		switch {
		case k >= 0 && k < len(x.table):
			x.table[k] = int32(i + 1)
			return
		case k >= 0 && dense(k+1, i+1):
			x.table = append(x.table, make([]int32, k+1-len(x.table))...)
			x.table[k] = int32(i + 1)
			return
		}
		x.m = make(map[int]int, i+1)
		for k, j := range x.table {
			if j != 0 {
				x.m[x.lo+k] = int(j) - 1
			}
		}
		x.table = nil
	}
	x.m[pr] = i
}
