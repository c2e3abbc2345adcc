package testsapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Handlers serves the /flaky-tests endpoints.
type Handlers struct {
	Store  *store.Store
	Viewer healthview.Viewer
	Now    func() time.Time
	NewID  func() string // ids of outbox events
	// Secret is the deployment's secret for signing page tokens.
	Secret func(ctx context.Context) ([]byte, error)
	// Health labels failures (label-failures).
	Health *healthsvc.Service
}

// New is the handlers on the test-health service h, whose page tokens are
// signed with the deployment's page-token secret.
func New(h *healthsvc.Service, secrets config.SecretReader) *Handlers {
	return &Handlers{
		Store: h.Store, Now: h.Now, NewID: h.NewID, Viewer: h.Viewer, Health: h,
		Secret: func(ctx context.Context) ([]byte, error) { return secrets.Secret(ctx, config.SecretPageToken) },
	}
}

// Endpoints are the test endpoints, by function name.
func (h *Handlers) Endpoints() api.Handlers {
	return api.Handlers{
		"get-test-details":         h.GetTestDetails(),
		"link-ticket-to-test-case": h.LinkTicket(),
		"list-quarantined-tests":   h.ListQuarantined(),
		"list-unhealthy-tests":     h.ListUnhealthy(),
		"list-failing-tests":       h.ListFailing(),
		"label-failures":           h.LabelFailures(),
	}
}

type getTestDetailsRequest struct {
	Repo       *repository.Ref `json:"repo"`
	OrgURLSlug string          `json:"org_url_slug"`
	TestID     string          `json:"test_id"`
}

// GetTestDetails serves POST /flaky-tests/get-test-details: one
// BatchGetItem of the repository (its quarantine settings) and the test.
func (h *Handlers) GetTestDetails() http.Handler {
	return api.JSON(func(r *http.Request, req *getTestDetailsRequest) (any, error) {
		repo, err := api.RequireRepo(req.Repo, "repo")
		if err != nil {
			return nil, err
		}
		if err := api.RequireString(req.OrgURLSlug, "org_url_slug"); err != nil {
			return nil, err
		}
		id, err := api.RequireUUID(req.TestID, "test_id")
		if err != nil {
			return nil, err
		}
		org, err := api.OwnOrg(r.Context(), req.OrgURLSlug)
		if err != nil {
			return nil, err
		}
		settings, tc, err := h.Store.ShowTest(r.Context(), org, repo, id)
		if err != nil {
			return nil, err
		}
		s := settings.Settings()
		tc.Quarantined = testhealth.Quarantined(tc, s)
		return map[string]healthview.TestCase{"test": h.Viewer.Full(tc, s, h.Now())}, nil
	})
}

type linkTicketRequest struct {
	TestCaseID       string          `json:"test_case_id"`
	ExternalTicketID string          `json:"external_ticket_id"`
	Repo             *repository.Ref `json:"repo"`
}

// LinkTicket serves POST /flaky-tests/link-ticket-to-test-case. Checks run
// in the contract's order: body shape (400), repository and test (404),
// tracker setting (400).
func (h *Handlers) LinkTicket() http.Handler {
	return api.JSON(func(r *http.Request, req *linkTicketRequest) (any, error) {
		id, err := api.RequireUUID(req.TestCaseID, "test_case_id")
		if err != nil {
			return nil, err
		}
		if err := api.RequireString(req.ExternalTicketID, "external_ticket_id"); err != nil {
			return nil, err
		}
		key := req.ExternalTicketID // its shape, PROJ-123, is its limit's (api.Limits)
		repo, err := api.RequireRepo(req.Repo, "repo")
		if err != nil {
			return nil, err
		}
		ctx, org := r.Context(), api.Org(r.Context())
		settings, tc, err := h.Store.GetRepoAndTest(ctx, org, repo, id)
		if err != nil {
			return nil, err
		}
		s := settings.Settings()
		tc.Quarantined = testhealth.Quarantined(tc, s)
		var ticketURL string
		switch {
		case settings.JiraBaseURL != "":
			ticketURL = strings.TrimRight(settings.JiraBaseURL, "/") + "/browse/" + key
		case settings.LinearWorkspace != "":
			ticketURL = "https://linear.app/" + settings.LinearWorkspace + "/issue/" + key
		default:
			return nil, errs.E(errs.Invalid, "no issue tracker is configured for this repository")
		}
		now := h.Now()
		tc.Ticket = &testhealth.Ticket{ID: key, HTMLURL: ticketURL}
		ev, err := h.Viewer.TicketLinkedEvent(h.NewID(), tc, s, now)
		if err != nil {
			return nil, err
		}
		if err := h.Store.LinkTicket(ctx, org, repo, id, *tc.Ticket, ev); err != nil {
			return nil, err
		}
		return struct{}{}, nil
	})
}
