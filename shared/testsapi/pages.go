package testsapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/mainguard/mainguard/shared/errs"
)

// PageQuery is the contract's page_query.
type PageQuery struct {
	PageSize  *int   `json:"page_size"`
	PageToken string `json:"page_token"`
}

// Page is the contract's page object.
type Page struct {
	TotalRows     int    `json:"total_rows"`
	TotalPages    int    `json:"total_pages"`
	NextPageToken string `json:"next_page_token"`
	PrevPageToken string `json:"prev_page_token"`
	LastPageToken string `json:"last_page_token"`
	PageIndex     int    `json:"page_index"`
}

// cursor is what a page token carries. Query binds it to the list and
// filters it was made for, so a token cannot be replayed against another
// list, repository or range.
type cursor struct {
	Query  string `json:"q"`
	Size   int    `json:"n"`
	Index  int    `json:"i"`
	After  string `json:"a,omitempty"`
	Before string `json:"b,omitempty"`
	Last   bool   `json:"l,omitempty"`
}

// pager signs and checks page tokens: base64url(JSON) "." base64url(HMAC-SHA256).
type pager struct{ secret []byte }

func (p pager) sign(c cursor) string {
	body, _ := json.Marshal(c)
	mac := hmac.New(sha256.New, p.secret)
	mac.Write(body)
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

var errBadToken = errs.E(errs.Invalid, "page_query.page_token is not a valid page token for this query")

// open checks a token and returns its cursor; a forged, altered or foreign
// token is 400.
func (p pager) open(token, query string, size int) (cursor, error) {
	body64, sig64, ok := strings.Cut(token, ".")
	if !ok {
		return cursor{}, errBadToken
	}
	body, err1 := base64.RawURLEncoding.DecodeString(body64)
	sig, err2 := base64.RawURLEncoding.DecodeString(sig64)
	if err1 != nil || err2 != nil {
		return cursor{}, errBadToken
	}
	mac := hmac.New(sha256.New, p.secret)
	mac.Write(body)
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return cursor{}, errBadToken
	}
	var c cursor
	if err := json.Unmarshal(body, &c); err != nil || c.Query != query || c.Index < 0 {
		return cursor{}, errBadToken
	}
	if c.Size != size {
		return cursor{}, errs.E(errs.Invalid, "page_query.page_size must stay %d while paging with a token", c.Size)
	}
	return c, nil
}

// pageSize checks page_query and returns its size.
func pageSize(q *PageQuery) (int, error) {
	if q == nil || q.PageSize == nil {
		return 0, errs.E(errs.Invalid, "page_query.page_size is required")
	}
	if n := *q.PageSize; n < 1 || n > 100 {
		return 0, errs.E(errs.Invalid, "page_query.page_size must be between 1 and 100, got %d", n)
	}
	return *q.PageSize, nil
}

// pageOf fills the page object for page c of total rows whose first and
// last keys are given (for the neighbours' tokens).
func (p pager) pageOf(c cursor, total int, first, last string) Page {
	pages := pageCount(total, c.Size)
	pg := Page{TotalRows: total, TotalPages: pages, PageIndex: c.Index}
	if c.Index+1 < pages {
		pg.NextPageToken = p.sign(cursor{Query: c.Query, Size: c.Size, Index: c.Index + 1, After: last})
	}
	if c.Index > 0 {
		pg.PrevPageToken = p.sign(cursor{Query: c.Query, Size: c.Size, Index: c.Index - 1, Before: first})
	}
	if pages > 0 {
		pg.LastPageToken = p.sign(cursor{Query: c.Query, Size: c.Size, Index: pages - 1, Last: true})
	}
	return pg
}

// pageCount is how many pages of size rows total rows fill.
func pageCount(total, size int) int { return (total + size - 1) / size }
