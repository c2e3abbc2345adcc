package billing

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Bill adds up the cost of calls per kind of call. It is safe for
// concurrent use, as a store serves concurrent requests; the zero value is
// an empty bill.
type Bill struct {
	mu    sync.Mutex
	lines map[Kind]Line
}

// Add bills c, made on table t.
func (b *Bill) Add(c Call, t Table) {
	l := cost(c, t)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lines == nil {
		b.lines = map[Kind]Line{}
	}
	b.lines[c.Kind] = b.lines[c.Kind].plus(l)
}

// Line is what the calls of kind k cost so far.
func (b *Bill) Line(k Kind) Line {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lines[k]
}

// Total is what all calls cost so far.
func (b *Bill) Total() Line {
	b.mu.Lock()
	defer b.mu.Unlock()
	var t Line
	for _, l := range b.lines {
		t = t.plus(l)
	}
	return t
}

// String is one line for a log, kinds in API order, zero figures left out:
//
//	GetItem 3 calls read 1.5 | PutItem 2 calls write 4 index 2 | total 5 calls read 1.5 write 4 index 2
func (b *Bill) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.lines) == 0 {
		return "no calls"
	}
	var parts []string
	var t Line
	for _, k := range slices.Sorted(maps.Keys(b.lines)) {
		parts = append(parts, k.String()+" "+b.lines[k].String())
		t = t.plus(b.lines[k])
	}
	return strings.Join(append(parts, "total "+t.String()), " | ")
}

func (l Line) plus(m Line) Line {
	return Line{l.Calls + m.Calls, l.Read + m.Read, l.Write + m.Write, l.IndexWrite + m.IndexWrite}
}

// String is the line's figures, in request units, zeros left out.
func (l Line) String() string {
	s := strconv.Itoa(l.Calls) + " calls"
	for _, f := range []struct {
		name string
		v    float64
	}{{"read", l.Read}, {"write", l.Write}, {"index", l.IndexWrite}} {
		if f.v != 0 {
			s += " " + f.name + " " + strconv.FormatFloat(f.v, 'f', -1, 64)
		}
	}
	return s
}

type billKey struct{}

// WithBill returns a context whose calls through a Meter are billed in the
// returned Bill too: one request's, or one ingest's.
func WithBill(ctx context.Context) (context.Context, *Bill) {
	b := &Bill{}
	return context.WithValue(ctx, billKey{}, b), b
}

// BillOf is ctx's Bill (WithBill), nil when it has none.
func BillOf(ctx context.Context) *Bill {
	b, _ := ctx.Value(billKey{}).(*Bill)
	return b
}
