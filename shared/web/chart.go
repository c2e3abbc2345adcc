package web

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"
)

// chart is a bar chart of one value per time bucket, drawn as SVG on the
// server: axes with ticks at round values, the unit on each y tick, a
// title a screen reader reads.
type chart struct {
	Title  string
	XLabel string // e.g. "hour (UTC)"
	YLabel string // e.g. "PRs in the queue"
	Kind   valueKind
	Bars   []bar
	// TimeFormat labels the x ticks (bars' start times, UTC).
	TimeFormat string
}

type bar struct {
	At    time.Time
	Value float64 // a count, a percentage, or seconds (Kind)
	Empty bool    // no data in the bucket: drawn as a gap, not a zero
}

// valueKind is what a chart's values are, which decides its y ticks.
type valueKind int

const (
	countKind    valueKind = iota // whole things: PRs
	percentKind                   // 0 to 100
	durationKind                  // seconds, shown in s, min or h as the range needs
)

// The drawing's geometry, in SVG user units.
const (
	chartW, chartH         = 640, 240
	padL, padR, padT, padB = 64, 16, 28, 48
	plotW, plotH           = chartW - padL - padR, chartH - padT - padB
	// maxBarW keeps a bar a bar when there are few buckets.
	maxBarW = 40
)

// axis is a chart's y axis: ticks from 0 to Top every Step, both whole
// numbers of Unit, which is Per values (60 for minutes of seconds).
type axis struct {
	Unit      string // suffix of every tick label: "", "%", " s", " min", " h"
	Per       float64
	Step, Top float64
}

// yAxis is the axis for values up to peak: the unit that fits the range
// (for durations: seconds under 2 minutes, minutes under 2 hours, else
// hours), and a step of 1, 2 or 5 times a power of ten of it, never under
// one unit, so every tick is a round, whole number and no two are alike;
// about four steps cover peak.
func yAxis(kind valueKind, peak float64) axis {
	a := axis{Per: 1}
	switch kind {
	case percentKind:
		a.Unit = "%"
	case durationKind:
		switch {
		case peak < 2*60:
			a.Unit = " s"
		case peak < 2*3600:
			a.Unit, a.Per = " min", 60
		default:
			a.Unit, a.Per = " h", 3600
		}
	}
	m := peak / a.Per
	a.Step = niceStep(m / 4)
	a.Top = math.Max(a.Step, math.Ceil(m/a.Step)*a.Step)
	return a
}

// niceStep is the least of 1, 2, 5, 10, 20, 50, … that is at least x.
func niceStep(x float64) float64 {
	if x <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if x <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// ticks are the axis's tick values, in its unit, from 0 to Top.
func (a axis) ticks() []float64 {
	var out []float64
	for i := 0.0; i*a.Step <= a.Top; i++ {
		out = append(out, i*a.Step)
	}
	return out
}

// label is a tick's label: a whole number and the unit.
func (a axis) label(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + a.Unit }

// value is a bar's value in the axis's unit, for its tooltip: whole, or
// with one decimal when it is not.
func (a axis) value(v float64) string {
	v /= a.Per
	if v == math.Trunc(v) {
		return a.label(v)
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + a.Unit
}

// SVG draws the chart: markup for a page as it is.
func (c chart) SVG() string {
	var b strings.Builder
	esc := html.EscapeString
	peak := 0.0
	for _, v := range c.Bars {
		peak = math.Max(peak, v.Value)
	}
	y := yAxis(c.Kind, peak)
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-label="%s" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		esc(c.Title), chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.Title))
	fmt.Fprintf(&b, `<text class="chart-title" x="%d" y="16" font-size="13" font-weight="bold">%s</text>`, padL, esc(c.Title))
	// y axis: gridlines and labels from 0 to the top tick.
	for _, v := range y.ticks() {
		py := float64(padT+plotH) - float64(plotH)*v/y.Top
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`, padL, py, padL+plotW, py)
		fmt.Fprintf(&b, `<text class="y-tick" x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>`, padL-6, py+4, esc(y.label(v)))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, padL, padT, padL, padT+plotH)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, padL, padT+plotH, padL+plotW, padT+plotH)
	fmt.Fprintf(&b, `<text class="y-label" x="14" y="%d" font-size="12" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>`,
		padT+plotH/2, padT+plotH/2, esc(c.YLabel))
	fmt.Fprintf(&b, `<text class="x-label" x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>`, padL+plotW/2, chartH-6, esc(c.XLabel))
	n := len(c.Bars)
	if n == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" text-anchor="middle">no data</text>`, padL+plotW/2, padT+plotH/2)
	}
	step := 1
	if n > 8 {
		step = (n + 7) / 8 // at most about eight x labels
	}
	slot := float64(plotW) / float64(max(n, 1))
	w := math.Min(slot*0.8, maxBarW)
	for i, v := range c.Bars {
		mid := float64(padL) + slot*(float64(i)+0.5)
		at := esc(v.At.UTC().Format(c.TimeFormat))
		if !v.Empty {
			h := float64(plotH) * v.Value / y.Per / y.Top
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#3b6fb6"><title>%s: %s</title></rect>`,
				mid-w/2, float64(padT+plotH)-h, w, h, at, esc(y.value(v.Value)))
		}
		if i%step == 0 {
			fmt.Fprintf(&b, `<text class="x-tick" x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>`, mid, padT+plotH+16, at)
		}
	}
	b.WriteString(`</svg>`)
	return b.String() // every text in it was escaped above
}
