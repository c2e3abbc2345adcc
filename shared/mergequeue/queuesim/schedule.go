package queuesim

import (
	"fmt"
	"strconv"
	"strings"
)

// Schedule is a value that moves with the PRs: each Point holds from PR
// index From (0-based, in submit order) until the next point's. The first
// point is at 0.
type Schedule []Point

// Point is one step of a Schedule.
type Point struct {
	From  int
	Value float64
}

// ParseSchedule reads "VALUE@FROM,VALUE@FROM,…", e.g.
// "0.02@0,0.12@600,0.04@1200": 2% for the first 600 PRs, 12% for the next
// 600, then 4%. A lone "VALUE" holds for every PR.
func ParseSchedule(s string) (Schedule, error) {
	var out Schedule
	for part := range strings.SplitSeq(s, ",") {
		v, from, found := strings.Cut(strings.TrimSpace(part), "@")
		p := Point{}
		var err error
		if p.Value, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return nil, fmt.Errorf("%q is not VALUE@PR-INDEX: %q is not a number", part, v)
		}
		if found {
			if p.From, err = strconv.Atoi(strings.TrimSpace(from)); err != nil {
				return nil, fmt.Errorf("%q is not VALUE@PR-INDEX: %q is not a PR index", part, from)
			}
		} else if len(out) > 0 {
			return nil, fmt.Errorf("%q names no PR index; only a schedule of one value may leave it out", part)
		}
		out = append(out, p)
	}
	return out, out.check("value", func(float64) bool { return true })
}

// check reports a schedule that does not start at 0, goes back, or holds
// a value ok refuses.
func (s Schedule) check(what string, ok func(float64) bool) error {
	for i, p := range s {
		switch {
		case i == 0 && p.From != 0:
			return fmt.Errorf("a schedule starts at PR index 0, not %d", p.From)
		case i > 0 && p.From <= s[i-1].From:
			return fmt.Errorf("a schedule's PR indexes go up: %d after %d", p.From, s[i-1].From)
		case !ok(p.Value):
			return fmt.Errorf("%s %v is out of range", what, p.Value)
		}
	}
	return nil
}

// at is the value for PR index i.
func (s Schedule) at(i int) float64 {
	v := 0.0
	for _, p := range s {
		if p.From > i {
			break
		}
		v = p.Value
	}
	return v
}

// String writes the schedule as ParseSchedule reads it.
func (s Schedule) String() string {
	parts := make([]string, len(s))
	for i, p := range s {
		parts[i] = strconv.FormatFloat(p.Value, 'g', -1, 64) + "@" + strconv.Itoa(p.From)
	}
	return strings.Join(parts, ",")
}
