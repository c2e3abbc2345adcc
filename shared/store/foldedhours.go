package store

import (
	"encoding/binary"
	"slices"
)

// attrFoldedHours is the meta item's hours folded out of the counter item
// (foldIfDue), exactly, packed into one binary attribute: a week of hours
// as attributes of their own (x{hour}, as they were first kept, still
// read, and moved in here by the next fold) was some 170 attributes and
// 2.2 KB that every read of the test decoded; packed they are about 1 KB in
// one attribute. (The attribute is attrFoldedHours.)

// packHours encodes hours: a version byte, then per hour in order the
// difference from the hour before (the first from 0) and its four
// counters, as varints.
func packHours(hours map[int64]hourCounts) []byte {
	keys := make([]int64, 0, len(hours))
	for h, c := range hours {
		if !c.zero() {
			keys = append(keys, h)
		}
	}
	slices.Sort(keys)
	out := make([]byte, 1, 1+7*len(keys))
	out[0] = 1
	var prev int64
	for _, h := range keys {
		c := hours[h]
		out = binary.AppendUvarint(out, uint64(h-prev))
		for _, n := range []int{c.mp, c.mf, c.op, c.of} {
			out = binary.AppendUvarint(out, uint64(max(n, 0)))
		}
		prev = h
	}
	return out
}

// unpackHours calls add with each hour packHours encoded. A value it
// cannot read yields what it read before the damage.
func unpackHours(b []byte, add func(hour int64, c hourCounts)) {
	if len(b) == 0 || b[0] != 1 {
		return
	}
	b = b[1:]
	var h int64
	var v [5]uint64
	for len(b) > 0 {
		for i := range v {
			n, k := binary.Uvarint(b)
			if k <= 0 {
				return
			}
			v[i], b = n, b[k:]
		}
		h += int64(v[0])
		add(h, hourCounts{mp: int(v[1]), mf: int(v[2]), op: int(v[3]), of: int(v[4])})
	}
}
