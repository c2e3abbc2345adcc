package mergequeue

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
)

// TestEverySettingHasItsPatchField: each field of Settings has its field
// in QueuePatch, of the same name and API name, which UpdateQueue applies
// (applyTo finds it by name).
func TestEverySettingHasItsPatchField(t *testing.T) {
	st, pt := reflect.TypeFor[Settings](), reflect.TypeFor[QueuePatch]()
	for i := range st.NumField() {
		f := st.Field(i)
		pf, ok := pt.FieldByName(f.Name)
		switch {
		case !ok:
			t.Errorf("setting %s has no QueuePatch field", f.Name)
		case pf.Tag.Get("json") != f.Tag.Get("json"):
			t.Errorf("setting %s is %q in QueuePatch, %q in Settings", f.Name, pf.Tag.Get("json"), f.Tag.Get("json"))
		case pf.Type.Kind() == reflect.Pointer && pf.Type.Elem().ConvertibleTo(f.Type):
		case pf.Type.Kind() == reflect.Slice && pf.Type == f.Type:
		default:
			t.Errorf("setting %s is a %s in QueuePatch, a %s in Settings", f.Name, pf.Type, f.Type)
		}
	}
}

// TestEveryEnumSettingIsChecked: a value outside an enum setting's
// constants is refused, never stored (applyTo converts what checked let
// through).
func TestEveryEnumSettingIsChecked(t *testing.T) {
	s := NewSnapshot(DefaultQueue(repository.Ref{Host: "github.com", Owner: "acme", Name: "app"}, "main"))
	st := reflect.TypeFor[Settings]()
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Type.Kind() != reflect.String || f.Type == reflect.TypeFor[string]() {
			continue
		}
		var p QueuePatch
		bogus := "NO_SUCH_VALUE"
		reflect.ValueOf(&p).Elem().FieldByName(f.Name).Set(reflect.ValueOf(&bogus))
		if _, _, err := UpdateQueue(s, p, t0); !errs.Is(err, errs.Invalid) {
			t.Errorf("%s %q: got %v, want it refused", f.Name, bogus, err)
		}
	}
}

// TestSettingsRoundTrip: settings written as getQueue shows them read back
// as the updateQueue call that sets every one of them to its value.
func TestSettingsRoundTrip(t *testing.T) {
	want := DefaultQueue(repository.Ref{Host: "github.com", Owner: "acme", Name: "app"}, "main").Settings
	want.Concurrency, want.Batch, want.RequiredStatuses, want.MergeMethod = 3, true, []string{"ci"}, Rebase
	want.FlakyRetryPolicy, want.ExtensionEnabled, want.StateLabelPrefix = RetryAnyFailure, true, "q/"
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var p QueuePatch
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	p, err = p.checked()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.applyTo(Settings{}), want); diff != "" {
		t.Errorf("settings (-got +want):\n%s", diff)
	}
}

// TestSnapshotOfEarlierSpellingReads: a snapshot stored before Settings
// named its fields by their Go names ("Concurrency"); the store's JSON
// reads them case-insensitively into the same settings.
func TestSnapshotOfEarlierSpellingReads(t *testing.T) {
	var s Snapshot
	old := `{"Queue":{"Branch":"main","Concurrency":3,"RequiredStatuses":["ci"],"MergeMethod":"REBASE","EnqueueingLabel":"go","FlakyRetries":2,"autopilot":true}}`
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	q := s.Queue
	if q.Branch != "main" || q.Concurrency != 3 || !slices.Equal(q.RequiredStatuses, []string{"ci"}) || q.MergeMethod != Rebase ||
		q.EnqueueingLabel != "go" || q.FlakyRetries != 2 || !q.Autopilot {
		t.Errorf("queue = %+v", q)
	}
}
