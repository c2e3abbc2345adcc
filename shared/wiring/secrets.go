package wiring

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/secrets"
	"github.com/mainguard/mainguard/shared/store"
)

// secretReader is how a copy reads the deployment's secrets
// (config.SecretReader): from Secrets Manager those whose ARN its
// configuration names; locally, the GitHub values of the environment, and
// the generated keys from the table.
type secretReader struct {
	ids     map[string]string
	local   map[string][]byte
	manager *secrets.Manager
	// table reads a generated key from the table (Options.KeysInTable);
	// nil in a function.
	table func(ctx context.Context, name string) ([]byte, error)
}

var _ config.SecretReader = (*secretReader)(nil)

// generated are the secrets that are random keys: the table can make them
// locally.
var generated = []string{config.SecretPageToken, config.SecretWebSession, config.SecretUploadURL}

func newSecretReader(cfg config.Config, st *store.Store, now func() time.Time, keysInTable bool) *secretReader {
	r := &secretReader{
		ids:   cfg.SecretIDs,
		local: map[string][]byte{},
		manager: &secrets.Manager{Now: now, Client: func() (secrets.API, error) {
			return secretsClient(cfg)
		}},
	}
	if cfg.GitHubWebhookSecret != "" {
		r.local[config.SecretGitHubWebhook] = []byte(cfg.GitHubWebhookSecret)
	}
	if cfg.GitHubAppPrivateKey != "" {
		// As app-setup stores it deployed: github.AppSecret's JSON, spelled
		// here rather than imported, so that every function (each links
		// wiring) does not link go-github for one struct.
		app, _ := json.Marshal(struct {
			AppID        int64  `json:"app_id"`
			ClientID     string `json:"client_id,omitempty"`
			ClientSecret string `json:"client_secret,omitempty"`
			PrivateKey   string `json:"private_key"`
		}{cfg.GitHubAppID, cfg.GitHubAppClientID, cfg.GitHubAppClientSecret, cfg.GitHubAppPrivateKey})
		r.local[config.SecretGitHubApp] = app
	}
	if keysInTable {
		r.table = tableKeys(st)
	}
	return r
}

// HasSecret reports whether the named secret is configured here.
func (r *secretReader) HasSecret(name string) bool {
	if r.ids[name] != "" || r.local[name] != nil {
		return true
	}
	return r.table != nil && slices.Contains(generated, name)
}

// Secret is the named secret's value.
func (r *secretReader) Secret(ctx context.Context, name string) ([]byte, error) {
	if id := r.ids[name]; id != "" {
		return r.manager.Get(ctx, name, id)
	}
	if v, ok := r.local[name]; ok {
		return v, nil
	}
	if r.table != nil && slices.Contains(generated, name) {
		return r.table(ctx, name)
	}
	return nil, errs.E(errs.Unavailable, "this function is not given the deployment's %s secret (%s), which this request needs", name, config.SecretVar(name))
}

// RenewSecret reads a Secrets Manager secret again; the others never change
// while the process runs.
func (r *secretReader) RenewSecret(ctx context.Context, name string) ([]byte, bool, error) {
	if id := r.ids[name]; id != "" {
		return r.manager.Renew(ctx, name, id)
	}
	v, err := r.Secret(ctx, name)
	return v, false, err
}

// tableKeys makes each generated key on first use and keeps it in the
// table (store.Secret), cached per process: such keys never change.
func tableKeys(st *store.Store) func(ctx context.Context, name string) ([]byte, error) {
	var mu sync.Mutex
	values := map[string][]byte{}
	return func(ctx context.Context, name string) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		if v, ok := values[name]; ok {
			return v, nil
		}
		v, err := st.Secret(ctx, name, func() []byte {
			s := make([]byte, 32)
			_, _ = rand.Read(s)
			return s
		})
		if err != nil {
			return nil, err
		}
		values[name] = v
		return v, nil
	}
}

// secretsClient is the Secrets Manager client: inside Lambda with the
// function's own credentials (also against a stand-in endpoint, which
// checks them), elsewhere as AWSConfig gives.
func secretsClient(cfg config.Config) (secrets.API, error) {
	awsCfg, ok := lambdaConfig(os.Getenv, cfg.Region)
	if !ok {
		c, err := AWSConfig(cfg.Region, cfg.SecretsEndpoint)
		if err != nil {
			return nil, err
		}
		awsCfg = c
	}
	return secretsmanager.NewFromConfig(awsCfg, func(o *secretsmanager.Options) {
		if cfg.SecretsEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.SecretsEndpoint)
		}
	}), nil
}
