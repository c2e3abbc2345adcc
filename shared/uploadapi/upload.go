package uploadapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Handlers serves the endpoints the uploader speaks besides the bundle
// itself: getQuarantineConfig and createBundleUpload.
type Handlers struct {
	Store *store.Store
	Now   func() time.Time
	// Uploads signs bundle upload addresses and, locally, takes bundles.
	Uploads Uploads
}

// Endpoints are the uploader's endpoints, by function name.
func (h *Handlers) Endpoints() api.Handlers {
	return api.Handlers{
		"get-quarantine-config": h.GetQuarantineConfig(),
		"create-bundle-upload":  h.CreateBundleUpload(),
	}
}

// UploadURLTTL is how long a pre-signed upload address is valid.
const UploadURLTTL = 15 * time.Minute

// Uploads signs the addresses bundles are PUT to: an S3 bucket's
// (blobs.S3) when deployed, the local server's (LocalUploads) otherwise.
type Uploads interface {
	PresignPut(ctx context.Context, key string, ttl time.Duration) (string, error)
}

type testIdentifier struct {
	Name       string `json:"name"`
	ParentName string `json:"parentName"`
	ClassName  string `json:"className"`
	File       string `json:"file"`
	ID         string `json:"id"`
	Variant    string `json:"variant"`
}

type quarantineConfigRequest struct {
	Repo            *repository.Ref  `json:"repo"`
	OrgURLSlug      string           `json:"orgUrlSlug"`
	TestIdentifiers []testIdentifier `json:"testIdentifiers"`
}

// GetQuarantineConfig serves POST /metrics/getQuarantineConfig, which the
// uploader asks before deciding its exit code: whether quarantining is on
// for the repository, and which of the named tests (all, when none are
// named) are quarantined. A repository never seen has quarantining off.
func (h *Handlers) GetQuarantineConfig() http.Handler {
	return api.JSON(func(r *http.Request, req *quarantineConfigRequest) (any, error) {
		ref, org, err := uploaderRepo(r, req.Repo, req.OrgURLSlug)
		if err != nil {
			return nil, err
		}
		ctx := r.Context()
		type answer struct {
			IsDisabled bool     `json:"isDisabled"`
			TestIDs    []string `json:"testIds"`
		}
		repo, err := h.Store.GetRepo(ctx, org, ref)
		if errs.Is(err, errs.NotFound) {
			return answer{IsDisabled: true, TestIDs: []string{}}, nil
		}
		if err != nil {
			return nil, err
		}
		settings := repo.Settings()
		if !settings.QuarantineEnabled {
			return answer{IsDisabled: true, TestIDs: []string{}}, nil
		}
		// Quarantined tests are few: read them all from their index rather
		// than look up each of possibly thousands of named tests.
		quarantined := map[string]bool{}
		q := store.PageQuery{Limit: 100}
		for {
			page, err := h.Store.ListQuarantineCandidates(ctx, org, ref, !settings.AutoQuarantine, q)
			if err != nil {
				return nil, err
			}
			for _, tc := range page.Tests {
				quarantined[strings.ToLower(tc.ID)] = true
			}
			if page.Next == "" {
				break
			}
			q.After = page.Next
		}
		ids := []string{}
		if len(req.TestIdentifiers) == 0 {
			for id := range quarantined {
				ids = append(ids, id)
			}
		}
		seen := map[string]bool{}
		for _, t := range req.TestIdentifiers {
			id := testhealth.TestID(testhealth.Identity{
				Org: req.OrgURLSlug, Repo: ref.Host + "/" + ref.Owner + "/" + ref.Name,
				File: t.File, Classname: t.ClassName, Parent: t.ParentName, Name: t.Name, ExplicitID: t.ID, Variant: t.Variant,
			})
			if quarantined[id] && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		return answer{IsDisabled: false, TestIDs: ids}, nil
	})
}

// uploaderRepo checks the repository and organization every uploader
// call names (orgUrlSlug, in the uploader's spelling): shape first (400),
// then the organization (404).
func uploaderRepo(r *http.Request, repo *repository.Ref, slug string) (repository.Ref, string, error) {
	ref, err := api.RequireRepo(repo, "repo")
	if err != nil {
		return repository.Ref{}, "", err
	}
	if err := api.RequireString(slug, "orgUrlSlug"); err != nil {
		return repository.Ref{}, "", err
	}
	org, err := api.OwnOrg(r.Context(), slug)
	return ref, org, err
}

type createBundleUploadRequest struct {
	Repo          *repository.Ref `json:"repo"`
	OrgURLSlug    string          `json:"orgUrlSlug"`
	ClientVersion string          `json:"clientVersion"`
}

// CreateBundleUpload serves POST /metrics/createBundleUpload: it records a
// new upload (creating the repository on first use) and answers the
// address to PUT its bundle to, valid for 15 minutes.
func (h *Handlers) CreateBundleUpload() http.Handler {
	return api.JSON(func(r *http.Request, req *createBundleUploadRequest) (any, error) {
		ref, org, err := uploaderRepo(r, req.Repo, req.OrgURLSlug)
		if err != nil {
			return nil, err
		}
		ctx := r.Context()
		repo, err := h.Store.UpdateRepo(ctx, org, ref, store.RepoSettings{})
		if err != nil {
			return nil, err
		}
		id := uuid.NewString()
		key := blobs.Key(org, id)
		if err := h.Store.CreateUpload(ctx, store.Upload{
			ID: id, Org: org, Repo: repo.Ref, BlobKey: key, ClientVersion: api.Clip(req.ClientVersion), CreatedAt: h.Now().UTC(),
			ResumeAt: h.Now().Add(UploadURLTTL + store.ResumeGrace), // then it is ingested, or expires unused
		}); err != nil {
			return nil, err
		}
		u, err := h.Uploads.PresignPut(ctx, key, UploadURLTTL)
		if err != nil {
			return nil, err
		}
		return struct {
			ID                                string  `json:"id"`
			IDV2                              string  `json:"idV2"`
			URL                               string  `json:"url"`
			Key                               string  `json:"key"`
			TestCollectionBundleMetaID        *string `json:"testCollectionBundleMetaId"`
			TestCollectionBundleMetaCreatedAt *string `json:"testCollectionBundleMetaCreatedAt"`
		}{ID: id, IDV2: id, URL: u, Key: key}, nil
	})
}

// LocalUploads is the local server's stand-in for S3: it signs addresses
// of its own PUT endpoint with HMAC-SHA256, keeps bundles in a folder and
// ingests each right after it lands.
type LocalUploads struct {
	BaseURL string // the API base, ending in /v1
	Secret  func(ctx context.Context) ([]byte, error)
	Dir     blobs.Dir
	Ingest  func(ctx context.Context, org, uploadID string) error
	// Refuse records an upload as failed with a reason (a bundle too large).
	Refuse func(ctx context.Context, org, uploadID, reason string) error
	Now    func() time.Time
}

// PutPath is the route of the local PUT endpoint; the key follows it.
const PutPath = "/bundles/"

// MaxBundle is the most the local PUT takes: a bundle of the contract's
// 20 MiB. It stands for S3, so the functions' body limit does not apply.
const MaxBundle = 20 << 20

func (l *LocalUploads) signature(secret []byte, key string, expires int64) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("PUT\n" + key + "\n" + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(mac.Sum(nil))
}

// PresignPut returns the signed local address for key.
func (l *LocalUploads) PresignPut(ctx context.Context, key string, ttl time.Duration) (string, error) {
	secret, err := l.Secret(ctx)
	if err != nil {
		return "", err
	}
	exp := l.Now().Add(ttl).Unix()
	q := url.Values{"expires": {strconv.FormatInt(exp, 10)}, "signature": {l.signature(secret, key, exp)}}
	return strings.TrimRight(l.BaseURL, "/") + PutPath + strings.TrimPrefix(key, "bundles/") + "?" + q.Encode(), nil
}

// Put serves PUT /v1/bundles/{org}/{id}.tar.zst?expires=…&signature=…: a
// wrong or expired signature is 403, as S3 answers; a good one stores the
// bundle and ingests it. A refused bundle is recorded as a failed upload
// and the PUT still succeeds, as it would on S3; an ingest that fails for a
// store outage answers 503, and the client may PUT again (ingestion is
// idempotent).
func (l *LocalUploads) Put() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		key := "bundles/" + strings.TrimPrefix(r.URL.Path, "/v1"+PutPath)
		org, id, err := blobs.ParseKey(key)
		if err != nil {
			api.WriteError(w, r, errs.E(errs.NotFound, "no such upload address"))
			return
		}
		secret, err := l.Secret(ctx)
		if err != nil {
			api.WriteError(w, r, err)
			return
		}
		exp, err := strconv.ParseInt(r.URL.Query().Get("expires"), 10, 64)
		sig := r.URL.Query().Get("signature")
		if err != nil || !hmac.Equal([]byte(sig), []byte(l.signature(secret, key, exp))) {
			api.WriteError(w, r, errs.E(errs.Forbidden, "the upload address signature does not match"))
			return
		}
		if l.Now().Unix() > exp {
			api.WriteError(w, r, errs.E(errs.Forbidden, "the upload address has expired"))
			return
		}
		if err := l.Dir.Put(key, r.Body, MaxBundle); err != nil {
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) { // the server's own bound on bodies
				err = errs.E(errs.TooLarge, "the bundle is larger than %d bytes", mbe.Limit)
			}
			if errs.Is(err, errs.TooLarge) && l.Refuse != nil {
				// Final: no bundle of this upload will ever be read. (A PUT
				// cut off midway is not: the client may send it again, and
				// an upload that never gets its bundle expires.)
				if rerr := l.Refuse(ctx, org, id, err.Error()); rerr != nil {
					api.WriteError(w, r, rerr)
					return
				}
			}
			api.WriteError(w, r, err)
			return
		}
		if err := l.Ingest(ctx, org, id); err != nil {
			api.WriteError(w, r, err)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
