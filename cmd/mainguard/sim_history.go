package main

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"text/tabwriter"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/mergequeue/queuesim"
	"github.com/mainguard/mainguard/shared/queueapi"
	"github.com/mainguard/mainguard/shared/repository"
)

// simReplay is `mainguard sim --from-history FILE`: the queue history
// FILE holds (`queue history --json`) replayed on the real engine, under
// the queue's own settings with the queue flags given laid over them
// (--autopilot among them), its actual figures beside the replay's; then
// the fixed settings within the autopilot's bounds, and the autopilot,
// replayed too, and the best of them recommended.
func simReplay(e *env, path string, flagged mergequeue.QueuePatch, seed uint64) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return usageError(fmt.Sprintf("sim: --from-history: %v", err))
	}
	h, settings, err := readHistory(data)
	if err != nil {
		return usageError(fmt.Sprintf("sim: --from-history: %s is not a history `mainguard queue history --json` wrote: %v", path, err))
	}
	own, err := queueapi.PatchOf(settings)
	if err != nil {
		return usageError(fmt.Sprintf("sim: --from-history: %s: %v", path, err))
	}
	replay, actual, err := queuesim.FromHistory(h.History)
	if err != nil {
		return usageError(fmt.Sprintf("sim: --from-history: %s: %v", path, err))
	}
	p := overlay(own, flagged)
	r, err := queuesim.Run(queuesim.ReplayConfig(replay, actual, p, seed))
	if err != nil {
		return simError(err)
	}
	w := e.stdout
	fmt.Fprintf(w, "%s %s from %s to %s: %d pull requests replayed (%d bad), %d cancelled and %d unfinished left out; run time %v (median of %d runs), flake rate %.1f%%, seed %d\n\n",
		h.Repo, h.TargetBranch, time.Time(h.Since).UTC().Format(time.DateTime), time.Time(h.Until).UTC().Format(time.DateTime),
		actual.PRs, r.Bad, actual.Cancelled, actual.Unfinished, actual.RunTime.Round(time.Second), len(replay.Durations), 100*actual.FlakeRate, seed)
	name := "replay, the queue's own settings"
	if !reflect.DeepEqual(p, own) {
		name = "replay, the settings given"
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tmerged\tfailed\tmerges/h\tp50\tp90\tCI runs/merge\t")
	fmt.Fprintf(tw, "actual\t%d\t%d\t%.2f\t%v\t%v\t%.2f\t\n", actual.Merged, actual.Failed, actual.MergesPerHour, actual.P50.Round(time.Minute), actual.P90.Round(time.Minute), actual.RunsPerMerge)
	replayRow(tw, name, r)
	_ = tw.Flush()
	fmt.Fprintf(w, "\nreplay / actual merges per hour: %.3f\n", r.MergesPerHour/actual.MergesPerHour)
	return recommend(w, replay, actual, own, p.AutopilotPatch, seed)
}

func replayRow(w io.Writer, name string, r queuesim.Result) {
	fmt.Fprintf(w, "%s\t%d\t%d\t%.2f\t%v\t%v\t%.2f\t\n", name, r.Merged, r.Failed+r.BadFailed, r.MergesPerHour, r.P50.Round(time.Minute), r.P90.Round(time.Minute), r.RunsPerMerge)
}

// recommend replays the history under the queue's own settings, the
// autopilot and every fixed setting within the autopilot's bounds
// (ap: the queue's own, or those given, or the defaults), and says which
// would have merged the most per hour. The baseline is what the queue
// ran: the autopilot when its own settings turn it on.
func recommend(w io.Writer, replay queuesim.Replay, actual queuesim.Actual, own mergequeue.QueuePatch, ap mergequeue.AutopilotPatch, seed uint64) error {
	q := mergequeue.DefaultQueue(repository.Ref{}, "main")
	if ap.AutopilotMaxConcurrency != nil {
		q.AutopilotMaxConcurrency = *ap.AutopilotMaxConcurrency
	}
	if ap.AutopilotMaxBatch != nil {
		q.AutopilotMaxBatch = *ap.AutopilotMaxBatch
	}
	cs, bs := queuesim.Grid(q.AutopilotMaxConcurrency, q.AutopilotMaxBatch)
	cfg := queuesim.ReplayConfig(replay, actual, own, seed)
	// The autopilot's run is cfg's with the autopilot on: within the
	// bounds asked for.
	cfg.Queue.AutopilotMaxConcurrency, cfg.Queue.AutopilotMaxBatch, cfg.Queue.AutopilotMaxCiRunsPerMerge =
		ap.AutopilotMaxConcurrency, ap.AutopilotMaxBatch, ap.AutopilotMaxCiRunsPerMerge
	h, err := queuesim.CompareFixed(cfg, cs, bs)
	if err != nil {
		return simError(err)
	}
	best := h.Fixed[h.BestOverall]
	fmt.Fprintf(w, "\nthe same history under other settings (%d fixed settings within the autopilot's bounds, concurrency ≤ %d, batch size ≤ %d):\n\n",
		len(h.Fixed), q.AutopilotMaxConcurrency, q.AutopilotMaxBatch)
	ranAutopilot := own.Autopilot != nil && *own.Autopilot
	base, offRow, apRow := h.Default, "the queue's own settings", "autopilot"
	if ranAutopilot {
		base, offRow, apRow = h.Autopilot, "autopilot off", "the queue's own settings (autopilot)"
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tmerged\tfailed\tmerges/h\tp50\tp90\tCI runs/merge\t")
	replayRow(tw, offRow, h.Default)
	replayRow(tw, apRow, h.Autopilot)
	replayRow(tw, fmt.Sprintf("best fixed: concurrency %d, %s", best.Concurrency, batchWords(best.Batch)), best.Result)
	_ = tw.Flush()
	gain := func(r queuesim.Result) float64 { return r.MergesPerHour/base.MergesPerHour - 1 }
	gainBest := gain(best.Result)
	fixedWords := fmt.Sprintf("concurrency %d with %s", best.Concurrency, batchWords(best.Batch))
	if ranAutopilot {
		fixedWords = "turn the autopilot off (updateQueue autopilot: false), " + fixedWords
	}
	switch gainAP := gain(h.Autopilot); {
	case ranAutopilot && gainBest < 0.02:
		fmt.Fprintf(w, "\nrecommendation: keep the autopilot on; no fixed setting tried merges 2%% more per hour.\n")
	case max(gainAP, gainBest) < 0.02:
		fmt.Fprintf(w, "\nrecommendation: keep the queue's settings; no setting tried merges 2%% more per hour.\n")
	case gainBest >= gainAP:
		fmt.Fprintf(w, "\nrecommendation: %s: %+.0f%% merges per hour (%.2f against %.2f), %.2f CI runs per merge (%.2f).\n",
			fixedWords, 100*gainBest, best.Result.MergesPerHour, base.MergesPerHour, best.Result.RunsPerMerge, base.RunsPerMerge)
	default:
		fmt.Fprintf(w, "\nrecommendation: turn the autopilot on (updateQueue autopilot: true): %+.0f%% merges per hour (%.2f against %.2f), %.2f CI runs per merge (%.2f).\n",
			100*gainAP, h.Autopilot.MergesPerHour, base.MergesPerHour, h.Autopilot.RunsPerMerge, base.RunsPerMerge)
	}
	return nil
}

// overlay is base with every field top sets (a non-nil pointer or list,
// a true flag) in its place: the queue flags given over a recorded
// queue's settings.
func overlay(base, top mergequeue.QueuePatch) mergequeue.QueuePatch {
	var walk func(dst, src reflect.Value)
	walk = func(dst, src reflect.Value) {
		for i := range src.NumField() {
			s, d := src.Field(i), dst.Field(i)
			switch s.Kind() {
			case reflect.Struct:
				walk(d, s)
			case reflect.Pointer, reflect.Slice:
				if !s.IsNil() {
					d.Set(s)
				}
			case reflect.Bool:
				if s.Bool() {
					d.Set(s)
				}
			}
		}
	}
	walk(reflect.ValueOf(&base).Elem(), reflect.ValueOf(top))
	return base
}
