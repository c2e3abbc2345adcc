package mergequeue

import (
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
)

// Settings are the settings of a queue that updateQueue sets and getQueue
// shows as they are, each under its API name (its tag): the one
// declaration of a setting for the engine, the API's answer (QueueView
// embeds it) and its request (QueuePatch holds a field of the same name,
// which UpdateQueue applies). An enum is of a named string type (getQueue
// spells those in lower case for the later API revision's clients), free
// text a plain string. State and mode are not among them: changing them
// is a transition (UpdateQueue), not a value set.
type Settings struct {
	Concurrency                 int              `json:"concurrency"`
	TestingTimeoutMinutes       int              `json:"testingTimeoutMinutes"`
	CanOptimisticallyMerge      bool             `json:"canOptimisticallyMerge"`
	PendingFailureDepth         int              `json:"pendingFailureDepth"`
	Batch                       bool             `json:"batch"`
	BatchingMaxWaitTimeMinutes  int              `json:"batchingMaxWaitTimeMinutes"`
	BatchingMinSize             int              `json:"batchingMinSize"`
	BisectionConcurrency        int              `json:"bisectionConcurrency"`
	RequiredStatuses            []string         `json:"requiredStatuses"` // nil: from branch protection; empty: none required
	MergeMethod                 MergeMethod      `json:"mergeMethod"`
	DirectMergeMode             DirectMergeMode  `json:"directMergeMode"`
	OptimizationMode            OptimizationMode `json:"optimizationMode"`
	CreatePrsForTestingBranches bool             `json:"createPrsForTestingBranches"`
	CommentsEnabled             bool             `json:"commentsEnabled"`
	CommandsEnabled             bool             `json:"commandsEnabled"`
	StatusCheckEnabled          bool             `json:"statusCheckEnabled"`
	// The settings the commercial Terraform provider sends beside those of
	// contract 3.3: the label whose adding submits a PR (EnqueueingLabel,
	// DefaultEnqueueingLabel when empty) and removing cancels it, when
	// LabelCommandsEnabled; a label naming the PR's state, when
	// StateLabelsEnabled; ExtensionEnabled only tells a browser extension
	// to show itself, and is stored and echoed.
	EnqueueingLabel      string `json:"enqueueingLabel"`
	LabelCommandsEnabled bool   `json:"labelCommandsEnabled"`
	StateLabelsEnabled   bool   `json:"stateLabelsEnabled"`
	ExtensionEnabled     bool   `json:"extensionEnabled"`
	// StateLabelPrefix (ours) starts every state label: the label of a PR
	// in state TESTS_PASSED is "{prefix}tests passed" (StateLabel).
	// DefaultStateLabelPrefix when empty.
	StateLabelPrefix string `json:"stateLabelPrefix"`
	// FlakyRetries (ours) is how many times a PR's failed run may be
	// retried in one episode (0..3), FlakyRetryPolicy which failures
	// qualify, and FlakyEvidenceWaitSeconds how long a failure waits for
	// the test results uploaded for its run before it counts as
	// unexplained.
	FlakyRetries             int              `json:"flakyRetries"`
	FlakyRetryPolicy         FlakyRetryPolicy `json:"flakyRetryPolicy"`
	FlakyEvidenceWaitSeconds int              `json:"flakyEvidenceWaitSeconds"`
}

// DefaultQueue is the queue createQueue makes for repo and branch, with the
// defaults of contract 3.3.
func DefaultQueue(repo repository.Ref, branch string) Queue {
	return Queue{
		Repo:   repo,
		Branch: branch,
		State:  QueueRunning,
		Mode:   ModeSingle,
		Settings: Settings{
			Concurrency:                1,
			TestingTimeoutMinutes:      300,
			BatchingMaxWaitTimeMinutes: 5,
			BatchingMinSize:            4,
			BisectionConcurrency:       1,
			MergeMethod:                Squash,
			DirectMergeMode:            DirectMergeOff,
			OptimizationMode:           OptimizationOff,
			CommentsEnabled:            true,
			CommandsEnabled:            true,
			StatusCheckEnabled:         true,
			EnqueueingLabel:            DefaultEnqueueingLabel,
			StateLabelPrefix:           DefaultStateLabelPrefix,
			FlakyRetryPolicy:           RetryKnownFlaky,
			FlakyEvidenceWaitSeconds:   DefaultEvidenceWaitSeconds,
		},
		AutopilotSettings: AutopilotSettings{}.withDefaults(),
	}
}

// QueuePatch is an updateQueue call, decoded straight from its body: nil
// fields are left alone. Each field of Settings has its field here, of the
// same name and tag (a pointer to its type, or a string for an enum);
// UpdateQueue sets the ones present after checking them. Enum values are
// accepted in any case.
type QueuePatch struct {
	State                       *string  `json:"state"`
	Mode                        *string  `json:"mode"`
	Concurrency                 *int     `json:"concurrency"`
	TestingTimeoutMinutes       *int     `json:"testingTimeoutMinutes"`
	CanOptimisticallyMerge      *bool    `json:"canOptimisticallyMerge"`
	PendingFailureDepth         *int     `json:"pendingFailureDepth"`
	Batch                       *bool    `json:"batch"`
	BatchingMaxWaitTimeMinutes  *int     `json:"batchingMaxWaitTimeMinutes"`
	BatchingMinSize             *int     `json:"batchingMinSize"`
	BisectionConcurrency        *int     `json:"bisectionConcurrency"`
	RequiredStatuses            []string `json:"requiredStatuses"`       // nil: left alone; empty: none required
	DeleteRequiredStatuses      bool     `json:"deleteRequiredStatuses"` // back to branch protection
	MergeMethod                 *string  `json:"mergeMethod"`
	DirectMergeMode             *string  `json:"directMergeMode"`
	OptimizationMode            *string  `json:"optimizationMode"`
	CreatePrsForTestingBranches *bool    `json:"createPrsForTestingBranches"`
	CommentsEnabled             *bool    `json:"commentsEnabled"`
	CommandsEnabled             *bool    `json:"commandsEnabled"`
	StatusCheckEnabled          *bool    `json:"statusCheckEnabled"`
	EnqueueingLabel             *string  `json:"enqueueingLabel"`
	LabelCommandsEnabled        *bool    `json:"labelCommandsEnabled"`
	StateLabelsEnabled          *bool    `json:"stateLabelsEnabled"`
	ExtensionEnabled            *bool    `json:"extensionEnabled"`
	StateLabelPrefix            *string  `json:"stateLabelPrefix"` // ours
	// The anti-flake retry settings (ours).
	FlakyRetries             *int    `json:"flakyRetries"`
	FlakyRetryPolicy         *string `json:"flakyRetryPolicy"`
	FlakyEvidenceWaitSeconds *int    `json:"flakyEvidenceWaitSeconds"`
	// The autopilot (ours).
	AutopilotPatch
}

// checked is p with every field checked and every enum value spelled as
// the engine's constant; its first error otherwise. p's values are not
// changed: a respelled enum gets a value of its own.
func (p QueuePatch) checked() (QueuePatch, error) {
	if err := p.checkNumbers(); err != nil {
		return p, err
	}
	if err := p.checkEnums(); err != nil {
		return p, err
	}
	if v := p.FlakyRetries; v != nil && (*v < 0 || *v > 3) {
		return p, errs.E(errs.Invalid, "flakyRetries must be 0 to 3")
	}
	if v := p.FlakyEvidenceWaitSeconds; v != nil && (*v < 0 || *v > 3600) {
		return p, errs.E(errs.Invalid, "flakyEvidenceWaitSeconds must be 0 to 3600")
	}
	if err := enum("flakyRetryPolicy", &p.FlakyRetryPolicy, RetryKnownFlaky, RetryAnyFailure); err != nil {
		return p, err
	}
	return p, p.checkLabels()
}

// checkNumbers checks the settings that are counts against their least
// value.
func (p QueuePatch) checkNumbers() error {
	for _, c := range []struct {
		field string
		v     *int
		min   int
	}{
		{"concurrency", p.Concurrency, 1},
		{"testingTimeoutMinutes", p.TestingTimeoutMinutes, 1},
		{"pendingFailureDepth", p.PendingFailureDepth, 0},
		{"batchingMaxWaitTimeMinutes", p.BatchingMaxWaitTimeMinutes, 0},
		{"batchingMinSize", p.BatchingMinSize, 1},
		{"bisectionConcurrency", p.BisectionConcurrency, 1},
	} {
		if err := atLeast(c.field, c.v, c.min); err != nil {
			return err
		}
	}
	return nil
}

// checkEnums checks and respells the enum fields but flakyRetryPolicy,
// which is checked after the retries' numbers.
func (p *QueuePatch) checkEnums() error {
	if err := enum("state", &p.State, QueueRunning, QueuePaused, QueueDraining); err != nil {
		return err
	}
	if err := enum("mode", &p.Mode, ModeSingle, ModeParallel); err != nil {
		return err
	}
	if err := enum("mergeMethod", &p.MergeMethod, MergeCommit, Squash, Rebase); err != nil {
		return err
	}
	if err := enum("directMergeMode", &p.DirectMergeMode, DirectMergeOff, DirectMergeAlways); err != nil {
		return err
	}
	return enum("optimizationMode", &p.OptimizationMode, OptimizationOff, OptimizationBisectionSkipTests)
}

// checkLabels checks the label settings and the required statuses.
func (p QueuePatch) checkLabels() error {
	if v := p.EnqueueingLabel; v != nil {
		if l := utf8.RuneCountInString(*v); strings.TrimSpace(*v) == "" || l > MaxLabelLength || strings.ContainsFunc(*v, unicode.IsControl) {
			return errs.E(errs.Invalid, "enqueueingLabel must be a GitHub label name: 1 to %d characters, no control characters", MaxLabelLength)
		}
	}
	if v := p.StateLabelPrefix; v != nil {
		if l := utf8.RuneCountInString(*v); strings.TrimSpace(*v) == "" || l > MaxStateLabelPrefix || strings.ContainsFunc(*v, unicode.IsControl) {
			return errs.E(errs.Invalid, "stateLabelPrefix must be 1 to %d characters, no control characters", MaxStateLabelPrefix)
		}
	}
	if slices.Contains(p.RequiredStatuses, "") {
		return errs.E(errs.Invalid, "requiredStatuses must not hold empty strings")
	}
	return nil
}

// enum checks the enum field *v, when set, against allowed and spells it
// as the allowed value it matches.
func enum[T ~string](field string, v **string, allowed ...T) error {
	if *v == nil {
		return nil
	}
	a, err := parseEnum(field, *v, allowed...)
	if err != nil {
		return err
	}
	canonical := string(a)
	*v = &canonical
	return nil
}

func parseEnum[T ~string](field string, v *string, allowed ...T) (T, error) {
	for _, a := range allowed {
		if strings.EqualFold(*v, string(a)) {
			return a, nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	last := len(names) - 1
	return "", errs.E(errs.Invalid, "%s must be %s or %s", field, strings.Join(names[:last], ", "), names[last])
}

func atLeast(field string, v *int, min int) error {
	if v != nil && *v < min {
		if min == 0 {
			return errs.E(errs.Invalid, "%s must be 0 or more", field)
		}
		return errs.E(errs.Invalid, "%s must be at least %d", field, min)
	}
	return nil
}

// applyTo is s with every setting p holds in its place: for each field of
// Settings, p's field of the same name when it is set (a non-nil pointer
// or list; a list is copied, and an empty one is kept, not dropped: it
// requires no status, as the commercial Terraform provider's [] means).
// p has been checked, its enums respelled (checked).
func (p QueuePatch) applyTo(s Settings) Settings {
	pv, sv := reflect.ValueOf(p), reflect.ValueOf(&s).Elem()
	for i := range sv.NumField() {
		dst := sv.Field(i)
		switch v := pv.FieldByName(sv.Type().Field(i).Name); {
		case v.IsNil():
		case v.Kind() == reflect.Pointer:
			dst.Set(v.Elem().Convert(dst.Type()))
		default: // a list
			dst.Set(reflect.AppendSlice(reflect.MakeSlice(dst.Type(), 0, v.Len()), v))
		}
	}
	return s
}

// CreateQueue is the snapshot of a new queue for repo and branch: the
// defaults (DefaultQueue) with the createQueue call's fields (p's mode,
// concurrency and autopilot settings; the others are not createQueue's),
// validated as updateQueue validates them, and bisection running as many
// test runs at once as the queue does.
func CreateQueue(repo repository.Ref, branch string, p QueuePatch, now time.Time) (Snapshot, error) {
	s, _, err := UpdateQueue(NewSnapshot(DefaultQueue(repo, branch)),
		QueuePatch{Mode: p.Mode, Concurrency: p.Concurrency, AutopilotPatch: p.AutopilotPatch}, now)
	if err != nil {
		return Snapshot{}, err
	}
	s.Queue.BisectionConcurrency = s.Queue.Concurrency
	return s, nil
}

// UpdateQueue applies an updateQueue call. A mode change while PRs are in
// the testing line puts the queue in SWITCHING_MODES, which Step ends when
// the line is empty; with an empty line the switch is immediate. While it
// switches, every field but state may change, and setting mode back to
// the current one calls the switch off.
func UpdateQueue(s Snapshot, p QueuePatch, now time.Time) (Snapshot, Output, error) {
	q := s.Queue.WithRetryDefaults()
	if q.State == QueueSwitchingModes && p.State != nil {
		return s, Output{}, errs.E(errs.Invalid, "state cannot change while the queue is switching modes to %s: set mode to %s to cancel the switch, or wait for the pull requests testing to finish", q.NextMode, q.Mode)
	}
	p, err := p.checked()
	if err != nil {
		return s, Output{}, err
	}
	wasOn := q.Autopilot
	if q.AutopilotSettings, err = q.AutopilotSettings.apply(p.AutopilotPatch); err != nil {
		return s, Output{}, err
	}
	if p.State != nil {
		q.State = QueueState(*p.State)
	}
	if p.DeleteRequiredStatuses {
		q.RequiredStatuses = nil
	}
	q.Settings = p.applyTo(q.Settings)
	if p.Mode != nil {
		q.switchMode(Mode(*p.Mode), lineBusy(s))
	}
	m := newMachine(s, now, nil)
	m.s.Queue = q
	switch {
	case q.Autopilot && !wasOn:
		m.s.Autopilot = newAutopilot(q, m.now)
	case !q.Autopilot:
		m.s.Autopilot = nil // the team's settings apply again
	}
	s2, out := m.finish()
	return s2, out, nil
}

// switchMode asks for mode: at once when no PR holds a place in a testing
// line (busy false), else through SWITCHING_MODES; asking for the current
// mode while switching calls the switch off.
func (q *Queue) switchMode(mode Mode, busy bool) {
	switch {
	case q.State == QueueSwitchingModes:
		if mode == q.Mode { // set back: the switch is called off
			q.State, q.NextMode = QueueRunning, ""
		}
	case mode != q.Mode:
		if busy {
			q.State, q.NextMode = QueueSwitchingModes, mode
		} else {
			q.Mode = mode
		}
	}
}

// lineBusy reports whether any entry holds a place in a testing line.
func lineBusy(s Snapshot) bool {
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Active() && (e.State.inFlight() || e.Position > 0) {
			return true
		}
	}
	return false
}
