package store

import (
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// The table's stream hands the functions behind it (deliver-webhooks,
// fold-queue-commands) the items written, keys and new image in the
// stream's own attribute-value type. Only the store knows the keys and
// attributes, so only the store reads them: these say what an inserted
// item is, and false for any other record (another item, a change other
// than an insert, an attribute of an unexpected type), whatever filter
// the event source applies.

// InsertedEventOrg is the organization of an outbox event item
// (PK=ORG#{org}#EVENT#{id}, SK=EVENT) the record inserts.
func InsertedEventOrg(rec events.DynamoDBEventRecord) (string, bool) {
	pk, pkOK := insertedKey(rec, AttrPK)
	sk, skOK := insertedKey(rec, AttrSK)
	if !pkOK || !skOK || sk != skEvent {
		return "", false
	}
	rest, ok := strings.CutPrefix(pk, prefixOrg)
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, "#EVENT#")
	if i <= 0 {
		return "", false
	}
	return rest[:i], true
}

// InsertedCommandQueue is the queue of a queue command item the record
// inserts, read from its new image (setQueueKey's attributes).
func InsertedCommandQueue(rec events.DynamoDBEventRecord) (QueueKey, bool) {
	sk, ok := insertedKey(rec, AttrSK)
	if !ok || !strings.HasPrefix(sk, skCommandPrefix) {
		return QueueKey{}, false
	}
	k := queueKeyOf(func(n string) string {
		v, _ := streamString(rec.Change.NewImage[n])
		return v
	})
	return k, k.Org != "" && k.Branch != ""
}

// insertedKey is a key attribute (AttrPK or AttrSK) of the item an insert
// record writes; false for other records.
func insertedKey(rec events.DynamoDBEventRecord, name string) (string, bool) {
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
		return "", false
	}
	return streamString(rec.Change.Keys[name])
}

// streamString is a string attribute of a stream record; false when
// absent or of another type.
func streamString(av events.DynamoDBAttributeValue) (string, bool) {
	if av.DataType() != events.DataTypeString {
		return "", false
	}
	return av.String(), true
}
