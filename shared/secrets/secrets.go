package secrets

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"

	"github.com/mainguard/mainguard/shared/errs"
)

// API is the one Secrets Manager call a function makes: the SDK client, or
// anything that speaks for it.
type API interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

var _ API = (*secretsmanager.Client)(nil)

// Defaults of a Manager's zero fields.
const (
	// DefaultTTL is how long a value is used before it is read again: a
	// rotated secret reaches every copy within it. Each read is one
	// GetSecretValue (billed per 10,000 calls), so a copy reads each secret
	// it uses at most 4 times an hour.
	DefaultTTL = 15 * time.Minute
	// DefaultMinAge is the least age of a value Renew reads again: failures
	// a client can cause (a bad webhook signature) cost at most one read
	// per this time, whatever their number.
	DefaultMinAge = 30 * time.Second
	// DefaultRetry is how long a failed read is answered from memory
	// before Secrets Manager is asked again.
	DefaultRetry = 5 * time.Second
)

// Manager reads secrets from Secrets Manager and keeps each per copy.
type Manager struct {
	// Client builds the SDK client on first use, so a function that never
	// needs a secret never builds one.
	Client func() (API, error)
	TTL    time.Duration // DefaultTTL when zero
	MinAge time.Duration // DefaultMinAge when zero
	Retry  time.Duration // DefaultRetry when zero
	Now    func() time.Time

	once      sync.Once
	api       API
	clientErr error

	mu      sync.Mutex
	entries map[string]*entry // by secret id
}

type entry struct {
	mu       sync.Mutex // one read of a secret at a time per copy
	value    []byte
	version  string
	readAt   time.Time
	err      error
	failedAt time.Time
}

// Get returns the current value of the secret id (an ARN or name); name is
// how a client-facing sentence calls it. A value is kept TTL; past it the
// secret is read again, and if that read fails the old value is kept
// (Secrets Manager's outage does not become ours).
func (m *Manager) Get(ctx context.Context, name, id string) ([]byte, error) {
	e := m.entry(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := m.now()
	if e.value != nil && now.Sub(e.readAt) < or(m.TTL, DefaultTTL) {
		return e.value, nil
	}
	if err := m.read(ctx, name, id, e, now); err != nil && e.value == nil {
		return nil, err
	}
	return e.value, nil
}

// Renew reads the secret again unless its value is younger than MinAge,
// for a caller whose verification with the kept value failed: changed
// reports whether a new version came (worth verifying again).
func (m *Manager) Renew(ctx context.Context, name, id string) (value []byte, changed bool, err error) {
	e := m.entry(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := m.now()
	if e.value != nil && now.Sub(e.readAt) < or(m.MinAge, DefaultMinAge) {
		return e.value, false, nil
	}
	old := e.version
	if err := m.read(ctx, name, id, e, now); err != nil {
		if e.value == nil {
			return nil, false, err
		}
		return e.value, false, nil
	}
	return e.value, e.version != old, nil
}

// read fetches the AWSCURRENT version into e, or records why not. A
// failure is answered from e for Retry before Secrets Manager is asked
// again.
func (m *Manager) read(ctx context.Context, name, id string, e *entry, now time.Time) error {
	if e.err != nil && now.Sub(e.failedAt) < or(m.Retry, DefaultRetry) {
		return e.err
	}
	api, err := m.client()
	if err == nil {
		var out *secretsmanager.GetSecretValueOutput
		out, err = api.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &id})
		if err == nil {
			switch {
			case out.SecretString != nil && *out.SecretString != "":
				e.value = []byte(*out.SecretString)
			case len(out.SecretBinary) > 0:
				e.value = out.SecretBinary
			default:
				err = errors.New("the secret's current version holds no value")
			}
			if err == nil {
				e.version, e.readAt, e.err = deref(out.VersionId), now, nil
				return nil
			}
		}
	}
	e.err, e.failedAt = unreadable(name, err), now
	return e.err
}

// unreadable is the client-facing sentence of a failed read: the secret's
// short name and AWS's error code, never the ARN (it names the account).
func unreadable(name string, err error) error {
	why := "Secrets Manager did not answer"
	var ae smithy.APIError
	if errors.As(err, &ae) {
		why = "Secrets Manager answered " + ae.ErrorCode()
	}
	return errs.Wrap(errs.Unavailable, err, "the deployment's %s secret cannot be read (%s); this request needs it, and is answered once the secret is readable", name, why)
}

func (m *Manager) client() (API, error) {
	m.once.Do(func() {
		if m.Client == nil {
			m.clientErr = errors.New("no Secrets Manager client")
			return
		}
		m.api, m.clientErr = m.Client()
	})
	return m.api, m.clientErr
}

func (m *Manager) entry(id string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[string]*entry{}
	}
	e := m.entries[id]
	if e == nil {
		e = &entry{}
		m.entries[id] = e
	}
	return e
}

func (m *Manager) now() time.Time {
	if m.Now == nil {
		return time.Now()
	}
	return m.Now()
}

func or(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
