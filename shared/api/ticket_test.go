package api

import (
	"regexp"
	"testing"
)

// TestTicketKeyIsTheContractsPattern holds the byte-by-byte check to the
// pattern it replaces, on every string of up to five bytes over an
// alphabet that reaches each of its branches.
func TestTicketKeyIsTheContractsPattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Z][A-Z0-9_]+-[0-9]+$`)
	alphabet := []byte("AZa09_-@ ")
	var walk func(prefix []byte)
	checked := 0
	walk = func(prefix []byte) {
		s := string(prefix)
		checked++
		if got, want := ticketKey(s), re.MatchString(s); got != want {
			t.Errorf("ticketKey(%q) = %v, the pattern says %v", s, got, want)
		}
		if len(prefix) == 5 {
			return
		}
		for _, c := range alphabet {
			walk(append(prefix, c))
		}
	}
	walk(nil)
	for _, s := range []string{"PROJ-123", "AB_9-0", "A-1", "PROJ-", "-12", "PROJ-12a", "PR-OJ-1", "proj-1", "ÄB-1"} {
		if got, want := ticketKey(s), re.MatchString(s); got != want {
			t.Errorf("ticketKey(%q) = %v, the pattern says %v", s, got, want)
		}
	}
	if checked < 60000 {
		t.Fatalf("checked only %d strings", checked)
	}
}
