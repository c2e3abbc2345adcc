package billing_test

import (
	"testing"

	"github.com/mainguard/mainguard/shared/store/billing"
)

const kb = 1024

// noIndexes is a table whose writes cost only the table's own units.
var noIndexes = billing.Table{PK: "PK", SK: "SK"}

func sized(sizes ...int) []*billing.Image {
	ims := make([]*billing.Image, len(sizes))
	for i, sz := range sizes {
		ims[i] = billing.Sized(sz)
	}
	return ims
}

func checkUnits(t *testing.T, c billing.Call, wantRead, wantWrite float64) {
	t.Helper()
	if r, w := billing.Units(c, noIndexes); r != wantRead || w != wantWrite {
		t.Errorf("Units(%v) = read %g write %g, want read %g write %g", c.Kind, r, w, wantRead, wantWrite)
	}
}

// Examples of "DynamoDB read and write operations":
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html

func TestReadWriteOperations_3500ByteItemReadsAs4KB(t *testing.T) {
	if got := billing.ReadUnits(3500, true); got != 1 {
		t.Errorf("strongly consistent: %g, want 1", got)
	}
	if got := billing.ReadUnits(3500, false); got != 0.5 {
		t.Errorf("eventually consistent: %g, want 0.5", got)
	}
}

// Also the 8 KB example of https://aws.amazon.com/dynamodb/pricing/on-demand/
func TestReadWriteOperations_8KBItemRead(t *testing.T) {
	checkUnits(t, billing.Call{Kind: billing.Get, Consistent: true, Read: sized(8 * kb)}, 2, 0)
	checkUnits(t, billing.Call{Kind: billing.Get, Read: sized(8 * kb)}, 1, 0)
	checkUnits(t, billing.Call{Kind: billing.TransactGet, Read: sized(8 * kb)}, 4, 0)
}

func TestReadWriteOperations_GetItemOf10KBRoundsTo12KB(t *testing.T) {
	checkUnits(t, billing.Call{Kind: billing.Get, Consistent: true, Read: sized(10 * kb)}, 3, 0)
}

func TestReadWriteOperations_BatchGetItemOf1_5And6_5KBIs12KB(t *testing.T) {
	// 4 KB + 8 KB, not 8 KB for the sum.
	checkUnits(t, billing.Call{Kind: billing.BatchGet, Consistent: true, Read: sized(1536, 6656)}, 3, 0)
}

func TestReadWriteOperations_QueryOf10ItemsTotalling40_8KBIs44KB(t *testing.T) {
	items := sized(4178, 4178, 4178, 4178, 4178, 4178, 4178, 4178, 4178, 4177) // 41,779 bytes
	checkUnits(t, billing.Call{Kind: billing.Query, Consistent: true, Read: items}, 11, 0)
}

func TestReadWriteOperations_QueryOf1500ItemsOf64BytesIs96KB(t *testing.T) {
	items := make([]int, 1500)
	for i := range items {
		items[i] = 64
	}
	// Summed, then rounded once; per item it would be 1500 units.
	checkUnits(t, billing.Call{Kind: billing.Query, Consistent: true, Read: sized(items...)}, 24, 0)
}

func TestReadWriteOperations_EventuallyConsistentReadOf80KBIs10Units(t *testing.T) {
	checkUnits(t, billing.Call{Kind: billing.Query, Read: sized(40*kb, 40*kb)}, 10, 0)
}

func TestReadWriteOperations_ScanBillsEvaluatedItems(t *testing.T) {
	// Read holds what was evaluated, the items a filter dropped included.
	checkUnits(t, billing.Call{Kind: billing.Scan, Consistent: true, Read: sized(3*kb, 3*kb)}, 2, 0)
}

func TestReadWriteOperations_ReadOfMissingItem(t *testing.T) {
	checkUnits(t, billing.Call{Kind: billing.Get, Consistent: true, Read: []*billing.Image{billing.Of(nil)}}, 1, 0)
	checkUnits(t, billing.Call{Kind: billing.Get, Read: []*billing.Image{nil}}, 0.5, 0)
	// A Query or Scan that finds nothing is billed too.
	checkUnits(t, billing.Call{Kind: billing.Query}, 0.5, 0)
}

func TestReadWriteOperations_500ByteItemWritesAs1KB(t *testing.T) {
	checkUnits(t, billing.Call{Kind: billing.Put, Writes: []billing.Write{{After: billing.Sized(500)}}}, 0, 1)
}

func TestReadWriteOperations_PutOrDeleteOf1_6KBRoundsTo2KB(t *testing.T) {
	checkUnits(t, billing.Call{Kind: billing.Put, Writes: []billing.Write{{After: billing.Sized(1638)}}}, 0, 2)
	checkUnits(t, billing.Call{Kind: billing.Delete, Writes: []billing.Write{{Before: billing.Sized(1638)}}}, 0, 2)
	// The brief's 1.5 KB item: 2 units as well.
	if got := billing.WriteUnits(1536); got != 2 {
		t.Errorf("WriteUnits(1.5 KB) = %g, want 2", got)
	}
}

func TestReadWriteOperations_UpdateAndOverwriteBillTheLargerImage(t *testing.T) {
	shrink := billing.Write{Before: billing.Sized(3 * kb), After: billing.Sized(100)}
	checkUnits(t, billing.Call{Kind: billing.Update, Writes: []billing.Write{shrink}}, 0, 3)
	grow := billing.Write{Before: billing.Sized(100), After: billing.Sized(3 * kb)}
	checkUnits(t, billing.Call{Kind: billing.Put, Writes: []billing.Write{grow}}, 0, 3)
}

func TestReadWriteOperations_BatchWriteItemOf500BytesAnd3_5KBIs5KB(t *testing.T) {
	w := []billing.Write{{After: billing.Sized(500)}, {After: billing.Sized(3584)}}
	checkUnits(t, billing.Call{Kind: billing.BatchWrite, Writes: w}, 0, 5)
}

// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/API_BatchWriteItem_v20111205.html
// (deleting a missing item costs one unit).
func TestBatchWriteItem_DeleteOfMissingItemIsOneUnit(t *testing.T) {
	checkUnits(t, billing.Call{Kind: billing.BatchWrite, Writes: []billing.Write{{}}}, 0, 1)
}

func TestReadWriteOperations_FailedConditionalWrite(t *testing.T) {
	for _, c := range []struct {
		name string
		w    billing.Write
		want float64
	}{
		{"1 KB item", billing.Write{Before: billing.Sized(kb), After: billing.Sized(kb), Failed: true}, 1},
		{"item twice that size", billing.Write{Before: billing.Sized(2 * kb), After: billing.Sized(2 * kb), Failed: true}, 2},
		{"no item yet", billing.Write{After: billing.Sized(3 * kb), Failed: true}, 1},
	} {
		if _, w := billing.Units(billing.Call{Kind: billing.Put, Writes: []billing.Write{c.w}}, noIndexes); w != c.want {
			t.Errorf("%s: %g units, want %g", c.name, w, c.want)
		}
	}
}

// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling
func TestTransactions_ThreeItemsOf500BytesCostSixUnits(t *testing.T) {
	w := []billing.Write{{After: billing.Sized(500)}, {After: billing.Sized(500)}, {After: billing.Sized(500)}}
	checkUnits(t, billing.Call{Kind: billing.TransactWrite, Writes: w}, 0, 6)
	checkUnits(t, billing.Call{Kind: billing.TransactGet, Read: sized(500, 500, 500)}, 6, 0)
	// One 500-byte item: 2 units.
	checkUnits(t, billing.Call{Kind: billing.TransactWrite, Writes: w[:1]}, 0, 2)
}

// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadWriteCapacityMode.html
func TestReadWriteCapacityMode_2KBItemWrite(t *testing.T) {
	w := []billing.Write{{After: billing.Sized(2 * kb)}}
	checkUnits(t, billing.Call{Kind: billing.Put, Writes: w}, 0, 2)
	checkUnits(t, billing.Call{Kind: billing.TransactWrite, Writes: w}, 0, 4)
}

// Property: a larger item never costs less.
func TestUnits_MonotoneInSize(t *testing.T) {
	prevW, prevR, prevE := 0.0, 0.0, 0.0
	for size := 0; size <= 400*kb; size += 97 {
		w, r, e := billing.WriteUnits(size), billing.ReadUnits(size, true), billing.ReadUnits(size, false)
		if w < prevW || r < prevR || e < prevE {
			t.Fatalf("size %d costs less than size %d", size, size-97)
		}
		if w < 1 || e < 0.5 {
			t.Fatalf("size %d costs less than the minimum", size)
		}
		prevW, prevR, prevE = w, r, e
	}
}
