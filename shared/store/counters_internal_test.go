package store

import (
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestPackedCounters: four counters survive packing, also when DynamoDB
// answers the number in exponent form, and a number too long for them is
// refused.
func TestPackedCounters(t *testing.T) {
	for _, c := range []hourCounts{{}, {mp: 1}, {of: 1}, {mp: 20, mf: 2}, {mp: 999_999_999, mf: 1, op: 7, of: 999_999_999}} {
		n := c.number()
		got, ok := unpackHour(n)
		if !ok || got != c {
			t.Errorf("%+v packed as %s read back as %+v (%v)", c, n.Value, got, ok)
		}
	}
	if got, ok := unpackHour(&types.AttributeValueMemberN{Value: "1E+27"}); !ok || got != (hourCounts{of: 1}) {
		t.Errorf("1E+27 read as %+v (%v)", got, ok)
	}
	if got, ok := unpackDay(&types.AttributeValueMemberN{Value: "2000000018"}); !ok || got != (dayCounts{mp: 18, mf: 2}) {
		t.Errorf("day read as %+v (%v)", got, ok)
	}
	for _, bad := range []string{"1" + "000000000000000000000000000000000000", "-5", "x"} {
		if _, ok := unpackHour(&types.AttributeValueMemberN{Value: bad}); ok {
			t.Errorf("%q read as counters", bad)
		}
	}
}

// TestPackedPRs: pull-request failure times survive packing to the
// millisecond, in about 6 bytes each for one an hour; merging keeps the
// later time of a pull request; a damaged value adds what it can and does
// not panic.
func TestPackedPRs(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 123_000_000, time.UTC)
	prs := map[string]time.Time{}
	for i := range 190 {
		prs[strconv.Itoa(5000+(i*7919)%400)] = t0.Add(-time.Duration(i)*time.Hour - time.Duration(i)*time.Millisecond)
	}
	prs["1"] = t0 // same time as another
	prs["987654321"] = t0.Add(-time.Minute)
	b := packPRs(prs)
	got := map[string]time.Time{}
	unpackPRs(b, got)
	if len(got) != len(prs) {
		t.Fatalf("read back %d pull requests, want %d", len(got), len(prs))
	}
	for pr, at := range prs {
		if !got[pr].Equal(at) {
			t.Errorf("pull request %s: %v, want %v", pr, got[pr], at)
		}
	}
	if per := float64(len(b)) / float64(len(prs)); per > 7 {
		t.Errorf("%d bytes for %d pull requests: %.1f each", len(b), len(prs), per)
	}
	later := map[string]time.Time{"1": t0.Add(time.Hour), "987654321": t0.Add(-time.Hour)}
	unpackPRs(b, later)
	if !later["1"].Equal(t0.Add(time.Hour)) || !later["987654321"].Equal(t0.Add(-time.Minute)) {
		t.Errorf("merged: %v", later)
	}
	for n := range len(b) {
		unpackPRs(b[:n], map[string]time.Time{})
	}
	unpackPRs([]byte{2, 1, 1}, map[string]time.Time{})
}

// TestPackedHours: folded hours survive packing, in about 6 bytes an hour
// for a week of hourly runs; empty hours are left out; a damaged value
// yields what precedes the damage and does not panic.
func TestPackedHours(t *testing.T) {
	hours := map[int64]hourCounts{}
	for h := int64(493000); h < 493000+192; h++ {
		hours[h] = hourCounts{mp: 18 + int(h%3), mf: int(h % 2), op: int(h % 5), of: 0}
	}
	hours[500000] = hourCounts{mp: 999_999_999, of: 1}
	hours[493500] = hourCounts{}
	b := packHours(hours)
	got := map[int64]hourCounts{}
	unpackHours(b, func(h int64, c hourCounts) { got[h] = c })
	delete(hours, 493500)
	if len(got) != len(hours) {
		t.Fatalf("read back %d hours, want %d", len(got), len(hours))
	}
	for h, c := range hours {
		if got[h] != c {
			t.Errorf("hour %d: %+v, want %+v", h, got[h], c)
		}
	}
	if per := float64(len(b)) / float64(len(hours)); per > 7 {
		t.Errorf("%d bytes for %d hours: %.1f each", len(b), len(hours), per)
	}
	for n := range len(b) {
		unpackHours(b[:n], func(int64, hourCounts) {})
	}
	unpackHours([]byte{9, 1}, func(int64, hourCounts) { t.Error("read a value of another version") })
}
