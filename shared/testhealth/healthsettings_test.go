package testhealth

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHealthSettingsWith: a change replaces the settings it sets, a list
// included, and leaves the others as they were.
func TestHealthSettingsWith(t *testing.T) {
	on, off, days, streak := true, false, 3, 5
	stored := HealthSettings{QuarantineEnabled: &on, RecoveryDays: &days, Branches: []string{"main"}}
	got := stored.With(HealthSettings{QuarantineEnabled: &off, Streak: &streak, Branches: []string{"release/*"}})
	want := HealthSettings{QuarantineEnabled: &off, RecoveryDays: &days, Streak: &streak, Branches: []string{"release/*"}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if *stored.QuarantineEnabled != true {
		t.Error("With changed the stored settings")
	}
}
