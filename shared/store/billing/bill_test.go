package billing_test

import (
	"sync"
	"testing"

	"github.com/mainguard/mainguard/shared/store/billing"
)

func TestBill_AddsUpPerKind(t *testing.T) {
	tb := gameScores(billing.All)
	var b billing.Bill
	if got := b.String(); got != "no calls" {
		t.Errorf("empty bill = %q", got)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			b.Add(billing.Call{Kind: billing.Get, Read: []*billing.Image{nil}}, tb)
		})
	}
	wg.Wait()
	put := billing.Call{Kind: billing.Put, Writes: []billing.Write{{After: billing.Of(score("123", "0"))}}}
	b.Add(put, tb)
	b.Add(put, tb)

	if got, want := b.Line(billing.Get), (billing.Line{Calls: 3, Read: 1.5}); got != want {
		t.Errorf("Line(Get) = %+v, want %+v", got, want)
	}
	if got, want := b.Total(), (billing.Line{Calls: 5, Read: 1.5, Write: 2, IndexWrite: 2}); got != want {
		t.Errorf("Total = %+v, want %+v", got, want)
	}
	want := "GetItem 3 calls read 1.5 | PutItem 2 calls write 2 index 2 | total 5 calls read 1.5 write 2 index 2"
	if got := b.String(); got != want {
		t.Errorf("String =\n%q, want\n%q", got, want)
	}
}
