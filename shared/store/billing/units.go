package billing

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB bills reads in blocks of 4 KB and writes in blocks of 1 KB.
const (
	readBlock  = 4 << 10
	writeBlock = 1 << 10
)

// ReadUnits is what reading sizeBytes costs: one unit per started 4 KB when
// strongly consistent, half that when eventually consistent. Nothing read
// still costs one block, as a read of a missing item does. A transactional
// read is twice the strongly consistent figure; Units applies that.
func ReadUnits(sizeBytes int, consistent bool) float64 {
	u := float64(blocks(sizeBytes, readBlock))
	if !consistent {
		u /= 2
	}
	return u
}

// WriteUnits is what writing one item of sizeBytes costs: one unit per
// started 1 KB, at least one. Which size to pass (the larger of before and
// after, the deleted item, an index entry) is decided by the caller of this
// function; a transactional write is twice this, which Units applies.
func WriteUnits(sizeBytes int) float64 {
	return float64(blocks(sizeBytes, writeBlock))
}

// blocks counts the started blocks in size, at least one: every request
// costs a block even when it finds or writes nothing.
func blocks(size, block int) int {
	return max(1, (size+block-1)/block)
}

// Kind is the DynamoDB operation a Call made.
type Kind int

const (
	Get Kind = iota
	Put
	Update
	Delete
	Query
	Scan
	BatchGet
	BatchWrite
	TransactGet
	TransactWrite
)

var kindNames = [...]string{
	"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan",
	"BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems",
}

// String is the operation's name in the DynamoDB API.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Image is one version of an item, as it was stored before a call or after
// it. A nil *Image means that no item existed. Build one with Of when the
// item is at hand, or with Sized when only its size is known (a wrapper that
// did not ask for ReturnValues does not see the old item).
type Image struct {
	item map[string]types.AttributeValue
	size int
}

// Of is the image of item, or nil when item is nil (nothing found, nothing
// returned), so that Of(out.Item) reads naturally after a GetItem.
func Of(item map[string]types.AttributeValue) *Image {
	if item == nil {
		return nil
	}
	return &Image{item: item, size: ItemSize(item)}
}

// Sized is an image known only by its size. The table units are exact, but
// the item's index entries cannot be told: a sized image counts as absent
// from every index (see Write).
func Sized(sizeBytes int) *Image { return &Image{size: sizeBytes} }

func (im *Image) bytes() int {
	if im == nil {
		return 0
	}
	return im.size
}

func (im *Image) attrs() map[string]types.AttributeValue {
	if im == nil {
		return nil
	}
	return im.item
}

// Write is one item a write call touched.
//
// Put: Before is the replaced item (nil if new), After the item sent.
// Update: Before and After as stored around the update.
// Delete: Before is the deleted item (nil if there was none), After nil.
// A TransactWriteItems ConditionCheck is a Write whose Before and After are
// the same image: it is billed as a write of that item and changes no index.
//
// Index units come from the items, so pass Of images (ReturnValues ALL_OLD,
// ALL_NEW) on a table with indexes; a Sized side is treated as not in any
// index, which turns an update of an indexed item into one index put.
type Write struct {
	Before, After *Image
	// Failed: the condition was false, so nothing changed and no index was
	// touched, but the table write is still billed.
	Failed bool
}

// tableUnits is the write billed on the table: the larger of the item
// before and after (an overwrite or update), the deleted item (a delete),
// at least one unit (a delete that found nothing).
func (w Write) tableUnits() float64 {
	// A failed condition where no item existed costs one unit, as the
	// documentation states. Where one existed, the pages disagree across
	// versions (the stored item's size, or the new item's); the larger of
	// the two is used, as for a write that succeeds.
	if w.Failed && w.Before == nil {
		return 1
	}
	return WriteUnits(max(w.Before.bytes(), w.After.bytes()))
}

// Call describes one DynamoDB request as the store made it.
type Call struct {
	Kind Kind
	// Consistent: a strongly consistent read (ConsistentRead). Ignored for
	// writes and transactions, and for a Query or Scan of a global index,
	// which is always eventually consistent.
	Consistent bool
	// Index is the index a Query or Scan read, "" for the table.
	Index string
	// Read: for Get, BatchGet and TransactGet one image per key asked for,
	// nil for a key that found nothing; for Query and Scan every item the
	// request evaluated, before any filter (filtered-out items are billed
	// too) and whole (a ProjectionExpression does not lower the bill). For
	// an index, the index entries.
	Read []*Image
	// Writes: for Put, Update and Delete one; for BatchWrite and
	// TransactWrite one per request or action.
	Writes []Write
}

// Units is what c costs on table t, in read and write request units, the
// index writes included in write.
func Units(c Call, t Table) (read, write float64) {
	l := cost(c, t)
	return l.Read, l.Write + l.IndexWrite
}

// Line is what a set of calls cost.
type Line struct {
	Calls      int
	Read       float64 // read request units
	Write      float64 // write request units on the table
	IndexWrite float64 // write request units the indexes add
}

func cost(c Call, t Table) Line {
	l := Line{Calls: 1}
	switch c.Kind {
	case Get, BatchGet: // a batch is billed as its gets, each rounded alone
		for _, im := range c.Read {
			l.Read += ReadUnits(im.bytes(), c.Consistent)
		}
	case TransactGet: // each item read twice (prepare, commit)
		for _, im := range c.Read {
			l.Read += 2 * ReadUnits(im.bytes(), true)
		}
	case Query, Scan: // one read of everything evaluated, rounded once
		total := 0
		for _, im := range c.Read {
			total += im.bytes()
		}
		l.Read = ReadUnits(total, c.Consistent && t.consistentReadable(c.Index))
	case Put, Update, Delete, BatchWrite, TransactWrite:
		// A transaction writes each item twice (prepare, commit). Its index
		// updates follow the commit once, so they are not doubled; the pages
		// say nothing either way, and measurements published by emulator
		// authors agree with this.
		rate := 1.0
		if c.Kind == TransactWrite {
			rate = 2
		}
		for _, w := range c.Writes {
			l.Write += rate * w.tableUnits()
			if !w.Failed {
				l.IndexWrite += t.IndexWriteUnits(w.Before.attrs(), w.After.attrs())
			}
		}
	}
	return l
}
