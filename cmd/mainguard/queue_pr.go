package main

import (
	"strconv"

	"github.com/mainguard/mainguard/shared/queueapi"
)

// queueSubmit is `mainguard queue submit PR`: submitPullRequest, with the
// priority and noBatch when given; submitting a submitted pull request
// again changes them.
func queueSubmit(e *env, args []string) error {
	f := newFlags(cmdOf("queue submit"))
	qf := newQueueFlags(f, e)
	priority := f.String("priority", "", "urgent, high, medium (the API's default), low, or 0..255 (0 is the most urgent)")
	noBatch := f.Bool("no-batch", false, "test the pull request alone, never in a batch")
	return prCommand(e, qf, args, "/submitPullRequest", "submitted to", func(body map[string]any) {
		// A number goes as a number, a name as a string; the API says
		// which are allowed.
		if n, err := strconv.Atoi(*priority); err == nil {
			body["priority"] = n
		} else if *priority != "" {
			body["priority"] = *priority
		}
		if f.isSet("no-batch") {
			body["noBatch"] = *noBatch
		}
	})
}

// queueCancel is `mainguard queue cancel PR`: cancelPullRequest.
func queueCancel(e *env, args []string) error {
	return prCommand(e, newQueueFlags(newFlags(cmdOf("queue cancel")), e), args, "/cancelPullRequest", "cancelled in", nil)
}

// queueRestart is `mainguard queue restart PR`: restartTestsOnPullRequest.
func queueRestart(e *env, args []string) error {
	return prCommand(e, newQueueFlags(newFlags(cmdOf("queue restart")), e), args, "/restartTestsOnPullRequest", "restarted its tests in", nil)
}

// prCommand calls path for the one pull request of args, with what fill
// adds to the body, and says it was done (--json: the API's answer, {}).
func prCommand(e *env, qf *queueCmdFlags, args []string, path, done string, fill func(map[string]any)) error {
	q, pos, err := qf.parse(e, args, 1)
	if err != nil {
		return err
	}
	n, err := prArg(qf.f.cmd.name, pos[0])
	if err != nil {
		return err
	}
	body := map[string]any{"pr": prNumber(n)}
	if fill != nil {
		fill(body)
	}
	if printed, err := q.answer(path, body, nil); err != nil || printed {
		return err
	}
	q.line("#%d %s %s", n, done, q)
	return nil
}

// queuePause, queueResume and queueDrain are `mainguard queue pause`,
// `resume` and `drain`: updateQueue with the state.
func queuePause(e *env, args []string) error { return setQueueState(e, args, "queue pause", "PAUSED") }
func queueResume(e *env, args []string) error {
	return setQueueState(e, args, "queue resume", "RUNNING")
}
func queueDrain(e *env, args []string) error {
	return setQueueState(e, args, "queue drain", "DRAINING")
}

func setQueueState(e *env, args []string, name, state string) error {
	q, _, err := newQueueFlags(newFlags(cmdOf(name)), e).parse(e, args, 0)
	if err != nil {
		return err
	}
	var v queueapi.QueueView
	if printed, err := q.answer("/updateQueue", map[string]any{"state": state}, &v); err != nil || printed {
		return err
	}
	q.line("%s: %s", q, colorOn(e).paint(stateCell(v.State)))
	return nil
}
