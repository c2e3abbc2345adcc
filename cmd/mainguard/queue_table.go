package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// cell is one cell of a table: its text and, on a terminal, an ANSI colour
// (an SGR parameter such as "32"; "" for none).
type cell struct{ text, color string }

// painter colours text, or does nothing when colour is off.
type painter bool

// colorOn reports whether output should be coloured: only on a terminal,
// and never when NO_COLOR is set (no-color.org) or TERM is dumb. A
// character device is taken for a terminal: that also colours output sent
// to /dev/null, which nobody reads.
func colorOn(e *env) painter {
	if e.getenv("NO_COLOR") != "" || e.getenv("TERM") == "dumb" {
		return false
	}
	f, ok := e.stdout.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p painter) paint(c cell) string {
	if !p || c.color == "" {
		return c.text
	}
	return "\x1b[" + c.color + "m" + c.text + "\x1b[0m"
}

// printTable writes rows under head, columns two spaces apart. Colour
// codes go around the padded text, so they take no width.
func (p painter) printTable(w io.Writer, head []string, rows [][]cell) {
	widths := make([]int, len(head))
	all := append([][]cell{cells(head...)}, rows...)
	for _, r := range all {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	for _, r := range all {
		var b strings.Builder
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(p.paint(c))
				break
			}
			c.text += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)+2)
			b.WriteString(p.paint(c))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// cells are uncoloured cells.
func cells(texts ...string) []cell {
	out := make([]cell, len(texts))
	for i, t := range texts {
		out[i] = cell{text: t}
	}
	return out
}

// stateCell colours a queue's or a pull request's state: green when it
// went well, yellow while under way or held, red when it failed, faint
// when out of play. Enums may come lowercase (ENUM_CASE=lower).
func stateCell(state string) cell {
	color := ""
	switch strings.ToUpper(state) {
	case "RUNNING", "TESTS_PASSED", "MERGED":
		color = "32"
	case "TESTING", "PAUSED", "DRAINING", "SWITCHING_MODES":
		color = "33"
	case "FAILED", "PENDING_FAILURE":
		color = "31"
	case "NOT_READY", "CANCELLED":
		color = "2"
	}
	return cell{text: state, color: color}
}

// ago says how long before now the API's timestamp was, to the minute
// (seconds under one), as "3m ago"; the timestamp as it came when it
// does not parse.
func ago(now time.Time, stamp string) string {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return stamp
	}
	d := max(now.Sub(t), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm ago", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours())/24)
	}
}
