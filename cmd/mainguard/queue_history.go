package main

import (
	"encoding/json"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue/queuesim"
	"github.com/mainguard/mainguard/shared/queueapi"
)

// queueHistory is `mainguard queue history`: the queue's arrivals, test
// runs and conclusions (getQueueHistory, ours); --json prints the API's
// answer, the file `mainguard sim --from-history` replays. Without it, the
// figures a replay would hold it to.
func queueHistory(e *env, args []string) error {
	f := newFlags(cmdOf("queue history"))
	qf := newQueueFlags(f, e)
	since := f.String("since", "", "the start of the history, an RFC 3339 time (default 30 days before --until)")
	until := f.String("until", "", "the end of the history, an RFC 3339 time at most 31 days after --since (default now)")
	q, _, err := qf.parse(e, args, 0)
	if err != nil {
		return err
	}
	body := map[string]any{}
	if *since != "" {
		body["since"] = *since
	}
	if *until != "" {
		body["until"] = *until
	}
	var h queueapi.QueueHistoryView
	if printed, err := q.answer("/getQueueHistory", body, &h); err != nil || printed {
		return err
	}
	q.line("%s from %s to %s: %d arrivals, %d test runs, %d merged, %d failed, %d cancelled",
		q, time.Time(h.Since).UTC().Format(time.DateTime), time.Time(h.Until).UTC().Format(time.DateTime),
		len(h.Arrivals), len(h.Runs), len(h.Merges), len(h.Failures), len(h.Cancellations))
	if _, a, err := queuesim.FromHistory(h.History); err == nil {
		q.line("  %.2f merges per hour, time to merge p50 %v, p90 %v, %.2f CI runs per merge, run time %v (median), flake rate %.1f%%",
			a.MergesPerHour, a.P50.Round(time.Second), a.P90.Round(time.Second), a.RunsPerMerge, a.RunTime.Round(time.Second), 100*a.FlakeRate)
	}
	q.line("  `mainguard queue history --json > history.json`, then `mainguard sim --from-history history.json`, replays it")
	return nil
}

// readHistory reads a file `queue history --json` wrote.
func readHistory(data []byte) (queueapi.QueueHistoryView, json.RawMessage, error) {
	var h queueapi.QueueHistoryView
	if err := json.Unmarshal(data, &h); err != nil {
		return h, nil, err
	}
	var raw struct {
		Settings json.RawMessage `json:"settings"`
	}
	err := json.Unmarshal(data, &raw)
	return h, raw.Settings, err
}
