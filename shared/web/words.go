package web

import (
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/mergequeue"
)

// stamp is a moment as every page shows it: in the reader's words,
// "11:18 UTC, 27 Nov" (with the year when it is not this year's), and
// exactly, RFC 3339, on hover (the "time" template).
type stamp struct{ Text, Exact string }

// stampOf is t as a page shows it at now; the zero time is no stamp.
func stampOf(t, now time.Time) stamp {
	if t.IsZero() {
		return stamp{}
	}
	t = t.UTC()
	layout := "15:04 UTC, 2 Jan"
	if t.Year() != now.UTC().Year() {
		layout += " 2006"
	}
	return stamp{Text: t.Format(layout), Exact: t.Format(time.RFC3339)}
}

// stampOfView is a timestamp of the API's test view (healthview.TimeFormat)
// as a page shows it; one that does not parse is no stamp.
func stampOfView(s string, now time.Time) stamp {
	t, err := time.Parse(healthview.TimeFormat, s)
	if err != nil {
		return stamp{}
	}
	return stampOf(t, now)
}

// coded is an enum value of the API shown in words, the value itself kept
// for the tooltip and the page's colours.
type coded struct{ Words, Code string }

// words spells an enum value for people: "PENDING_FAILURE" is "Pending
// failure".
func words(code string) coded {
	if code == "" {
		return coded{}
	}
	w := strings.ToLower(strings.ReplaceAll(code, "_", " "))
	return coded{Words: strings.ToUpper(w[:1]) + w[1:], Code: code}
}

// reasonOf is a transition's or run's reason in words (the table of
// mergequeue.ReasonWords), naming the failed statuses when they are known.
func reasonOf(code string, failed ...string) coded {
	if code == "" {
		return coded{}
	}
	return coded{Words: mergequeue.ReasonWords(code, failed...), Code: code}
}

// overrideWords are the quarantine overrides in words.
var overrideWords = map[string]string{
	"UNSPECIFIED":       "None: the repository's rule",
	"ALWAYS_QUARANTINE": "Always quarantine",
	"NEVER_QUARANTINE":  "Never quarantine",
}
