package web

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"
)

// chart is a bar chart of one value per time bucket, drawn as SVG on the
// server: axes with ticks, the unit on the y axis, a title a screen reader
// reads.
type chart struct {
	Title  string
	XLabel string // e.g. "hour (UTC)"
	YLabel string // e.g. "PRs in the queue"
	Unit   string // appended to y tick labels, e.g. "%" or " min"
	Bars   []bar
	// TimeFormat labels the x ticks (bars' start times).
	TimeFormat string
}

type bar struct {
	At    time.Time
	Value float64
	Empty bool // no data in the bucket: drawn as a gap, not a zero
}

// The drawing's geometry, in SVG user units.
const (
	chartW, chartH         = 640, 240
	padL, padR, padT, padB = 64, 16, 28, 48
	plotW, plotH           = chartW - padL - padR, chartH - padT - padB
	yTicks                 = 4
)

// SVG draws the chart.
func (c chart) SVG() template.HTML {
	var b strings.Builder
	esc := html.EscapeString
	max := 0.0
	for _, v := range c.Bars {
		max = math.Max(max, v.Value)
	}
	top := niceCeil(max)
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-label="%s" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		esc(c.Title), chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.Title))
	fmt.Fprintf(&b, `<text class="chart-title" x="%d" y="16" font-size="13" font-weight="bold">%s</text>`, padL, esc(c.Title))
	// y axis: gridlines and labels from 0 to top.
	for i := 0; i <= yTicks; i++ {
		v := top * float64(i) / yTicks
		y := padT + plotH - int(float64(plotH)*float64(i)/yTicks)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/>`, padL, y, padL+plotW, y)
		fmt.Fprintf(&b, `<text class="y-tick" x="%d" y="%d" font-size="11" text-anchor="end">%s%s</text>`, padL-6, y+4, formatTick(v), esc(c.Unit))
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
	for i, v := range c.Bars {
		slot := float64(plotW) / float64(n)
		x := float64(padL) + slot*float64(i)
		if !v.Empty && top > 0 {
			h := float64(plotH) * v.Value / top
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#3b6fb6"><title>%s: %s%s</title></rect>`,
				x+slot*0.1, float64(padT+plotH)-h, slot*0.8, h, esc(v.At.UTC().Format(c.TimeFormat)), formatTick(v.Value), esc(c.Unit))
		}
		if i%step == 0 {
			fmt.Fprintf(&b, `<text class="x-tick" x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>`,
				x+slot/2, padT+plotH+16, esc(v.At.UTC().Format(c.TimeFormat)))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text in it was escaped above
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for 0), so
// the y ticks are round numbers.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func formatTick(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
