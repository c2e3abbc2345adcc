// Package blobs owns where upload bundles are kept: an S3 bucket when
// deployed, a folder for the local server. Both open a bundle by key for
// ingestion, which reads it twice (check, then record), so a bundle is
// never held in memory.
package blobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mainguard/mainguard/shared/errs"
)

// Store opens stored bundles.
type Store interface {
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// Key is where the bundle of an upload is kept: the organization and the
// upload id, so an object-created event names both.
func Key(org, uploadID string) string { return "bundles/" + org + "/" + uploadID + ".tar.zst" }

// ParseKey reads the organization and upload id back from a key.
func ParseKey(key string) (org, uploadID string, err error) {
	rest, ok := strings.CutPrefix(key, "bundles/")
	org, file, ok2 := strings.Cut(rest, "/")
	uploadID, ok3 := strings.CutSuffix(file, ".tar.zst")
	if !ok || !ok2 || !ok3 || org == "" || uploadID == "" || strings.Contains(uploadID, "/") {
		return "", "", fmt.Errorf("blobs: %q is not a bundle key", key)
	}
	return org, uploadID, nil
}

// Dir keeps bundles as files under Root.
type Dir struct{ Root string }

var _ Store = Dir{}

func (d Dir) path(key string) (string, error) {
	if _, _, err := ParseKey(key); err != nil {
		return "", err
	}
	p := filepath.Join(d.Root, filepath.FromSlash(key))
	if !strings.HasPrefix(p, filepath.Clean(d.Root)+string(filepath.Separator)) {
		return "", fmt.Errorf("blobs: %q leaves the folder", key)
	}
	return p, nil
}

// Open opens a stored bundle; NotFound when there is none.
func (d Dir) Open(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, errs.Wrap(errs.NotFound, err, "bundle %s not found", key)
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errs.Wrap(errs.NotFound, err, "bundle %s not found", key)
	}
	return f, err
}

// Put stores at most max bytes of r under key, atomically (a reader never
// sees half a bundle); TooLarge when r holds more.
func (d Dir) Put(key string, r io.Reader, max int64) error {
	p, err := d.path(key)
	if err != nil {
		return errs.Wrap(errs.Invalid, err, "bad bundle key")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(r, max+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if n > max {
		return errs.E(errs.TooLarge, "the bundle is larger than %d bytes", max)
	}
	return os.Rename(tmp.Name(), p)
}
