package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// A test's pull-request failure times (what pull_requests_impacted counts)
// live in two places. A failing run sets its own, without reading, as one
// attribute pr.{number} of the failure item. Once maxLoosePRs of those are
// there, they are packed into one binary attribute of the meta item
// (attrPackedPRs) and removed from the failure item.
//
// Why: a test that fails on a new pull request every hour keeps about 190
// of them (Prune keeps 8 days). As attributes they are 2.9 KB on the item
// every failing run rewrites: 3 write units a failure instead of 1. Packed,
// they take about 6 bytes each, exactly (milliseconds), on the item written
// only at these packings and at the daily fold: about one meta write in
// maxLoosePRs failures on a pull request.
// The packed value is attrPackedPRs.
const maxLoosePRs = 16

// packPRs encodes pull-request failure times: a version byte, then per
// pull request in order of time the differences from the one before, of
// the number (zig-zag varint) and of the Unix milliseconds (varint). Keys
// that are not numbers (none are written) are left out.
func packPRs(prs map[string]time.Time) []byte {
	type entry struct{ pr, ms int64 }
	es := make([]entry, 0, len(prs))
	for k, at := range prs {
		if n, err := strconv.ParseInt(k, 10, 64); err == nil {
			es = append(es, entry{n, at.UnixMilli()})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Or(cmp.Compare(a.ms, b.ms), cmp.Compare(a.pr, b.pr)) })
	out := make([]byte, 1, 1+6*len(es))
	out[0] = 1
	var pr, ms int64
	for _, e := range es {
		out = binary.AppendVarint(out, e.pr-pr)
		out = binary.AppendUvarint(out, uint64(e.ms-ms))
		pr, ms = e.pr, e.ms
	}
	return out
}

// unpackPRs adds the times packPRs encoded to into, keeping the later time
// of a pull request both hold. A value it cannot read adds nothing more.
func unpackPRs(b []byte, into map[string]time.Time) {
	if len(b) == 0 || b[0] != 1 {
		return
	}
	b = b[1:]
	var pr, ms int64
	for len(b) > 0 {
		dp, n := binary.Varint(b)
		if n <= 0 {
			return
		}
		b = b[n:]
		dm, n := binary.Uvarint(b)
		if n <= 0 {
			return
		}
		b = b[n:]
		pr, ms = pr+dp, ms+int64(dm)
		laterPR(into, strconv.FormatInt(pr, 10), time.UnixMilli(ms).UTC())
	}
}

// laterPR records at as pr's failure time unless a later one is there.
func laterPR(m map[string]time.Time, pr string, at time.Time) {
	if old, ok := m[pr]; !ok || at.After(old) {
		m[pr] = at
	}
}

// packFailedPRs merges loose (the failure item's pr.{number} times) into
// the meta item's packed times, without what Prune drops at now (with loose
// empty, it only prunes, and writes only if Prune drops some), by a write
// conditional on the packed value read: a concurrent packing makes it read
// and merge again. The caller then removes loose from the failure item; a
// reader merges both places (the later time wins), so a crash in between
// loses nothing.
func (s *Store) packFailedPRs(ctx context.Context, meta map[string]types.AttributeValue, loose map[string]time.Time) error {
	for try := 0; ; try++ {
		item, err := s.getItem(ctx, meta) // billed by the item's size, projected or not
		if err != nil {
			return err
		}
		all := make(map[string]time.Time, len(loose)+maxLoosePRs)
		maps.Copy(all, loose)
		cond := "attribute_not_exists(#p)"
		values := map[string]types.AttributeValue{}
		if old, ok := item[attrPackedPRs].(*types.AttributeValueMemberB); ok {
			unpackPRs(old.Value, all)
			cond = "#p = :old"
			values[":old"] = old
		}
		kept, dropped := testhealth.Prune(testhealth.TestCase{FailedPRs: all}, s.now())
		if len(loose) == 0 && dropped == 0 {
			return nil // nothing to add or prune
		}
		values[":new"] = &types.AttributeValueMemberB{Value: packPRs(kept.FailedPRs)}
		_, err = s.updateItem(ctx, &dynamodb.UpdateItemInput{
			Key: meta, UpdateExpression: aws.String("SET #p = :new"),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  map[string]string{"#p": attrPackedPRs},
			ExpressionAttributeValues: values,
		})
		if !errs.Is(err, errs.Conflict) || try >= 3 {
			return err
		}
	}
}
