package githubsim

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

// FaultKind is how a faulted request is answered.
type FaultKind int

// The fault kinds.
const (
	// FaultServerError answers 500 without doing anything.
	FaultServerError FaultKind = iota + 1
	// FaultBadGateway answers 502 without doing anything.
	FaultBadGateway
	// FaultRateLimit answers 403 with x-ratelimit-remaining: 0 and
	// x-ratelimit-reset RetryAfter from now: GitHub's primary rate limit.
	FaultRateLimit
	// FaultSecondaryRateLimit answers 403 with retry-after and the
	// secondary limit's documentation link: GitHub's secondary rate limit
	// in the form it usually takes (the primary limit's headers still say
	// requests remain).
	FaultSecondaryRateLimit
	// FaultHang holds the request until the client gives up or the server
	// closes.
	FaultHang
	// FaultLoseResponse performs the request, then answers 502 instead of
	// the real answer: what a retried call must be idempotent against.
	FaultLoseResponse
	// FaultSecondaryRateLimit429 is the secondary rate limit's other form:
	// 429 with retry-after.
	FaultSecondaryRateLimit429
)

// Fault makes the next Times requests whose method is Method ("" for any)
// and whose path starts with PathPrefix answer as Kind says, after letting
// Skip such requests through untouched.
type Fault struct {
	Method     string
	PathPrefix string
	Kind       FaultKind
	Times      int
	Skip       int
	// RetryAfter is the wait the rate-limit kinds announce (default 60 s).
	RetryAfter time.Duration
}

// InjectFault adds a fault; faults are matched in the order they were added.
func (s *Server) InjectFault(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	if f.RetryAfter <= 0 {
		f.RetryAfter = time.Minute
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// ClearFaults drops every fault not yet consumed.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// RequestCount counts the requests received so far whose method is method
// ("" for any) and whose path starts with prefix.
func (s *Server) RequestCount(method, prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		m, p, _ := strings.Cut(r, " ")
		if (method == "" || m == method) && strings.HasPrefix(p, prefix) {
			n++
		}
	}
	return n
}

// takeFault consumes and returns the first fault matching the request.
func (s *Server) takeFault(method, path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, method+" "+path)
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == method) && strings.HasPrefix(path, f.PathPrefix) {
			if f.Skip > 0 {
				f.Skip--
				return nil
			}
			f.Times--
			if f.Times == 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			c := *f
			return &c
		}
	}
	return nil
}

// serveFault answers a faulted request; next is the real handler, used by
// FaultLoseResponse.
func (s *Server) serveFault(w http.ResponseWriter, r *http.Request, f *Fault, next http.Handler) {
	switch f.Kind {
	case FaultServerError:
		writeJSON(w, 500, errorJSON("Server Error", ""))
	case FaultBadGateway:
		writeJSON(w, 502, errorJSON("Server Error", ""))
	case FaultRateLimit:
		reset := s.now().Add(f.RetryAfter)
		h := w.Header()
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", "5000")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
		h.Set("X-RateLimit-Resource", "core")
		writeJSON(w, 403, errorJSON("API rate limit exceeded for installation.",
			"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit"))
	case FaultSecondaryRateLimit, FaultSecondaryRateLimit429:
		status := 403
		if f.Kind == FaultSecondaryRateLimit429 {
			status = 429
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter/time.Second)))
		writeJSON(w, status, errorJSON("You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "+
			"If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.",
			"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"))
	case FaultHang:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
	case FaultLoseResponse:
		next.ServeHTTP(httptest.NewRecorder(), r)
		writeJSON(w, 502, errorJSON("Server Error", ""))
	default:
		writeJSON(w, 500, errorJSON("Server Error", ""))
	}
}
