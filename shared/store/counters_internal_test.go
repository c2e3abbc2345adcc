package store

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestPackedCounters: four counters survive packing, also when DynamoDB
// answers the number in exponent form, and a number too long for them is
// refused.
func TestPackedCounters(t *testing.T) {
	for _, c := range []hourCounts{{}, {mp: 1}, {of: 1}, {mp: 20, mf: 2}, {mp: 999_999_999, mf: 1, op: 7, of: 999_999_999}} {
		n := c.number()
		got, ok := unpackHour(n)
		if !ok || got != c {
			t.Errorf("%+v packed as %s read back as %+v (%v)", c, n.Value, got, ok)
		}
	}
	if got, ok := unpackHour(&types.AttributeValueMemberN{Value: "1E+27"}); !ok || got != (hourCounts{of: 1}) {
		t.Errorf("1E+27 read as %+v (%v)", got, ok)
	}
	if got, ok := unpackDay(&types.AttributeValueMemberN{Value: "2000000018"}); !ok || got != (dayCounts{mp: 18, mf: 2}) {
		t.Errorf("day read as %+v (%v)", got, ok)
	}
	for _, bad := range []string{"1" + "000000000000000000000000000000000000", "-5", "x"} {
		if _, ok := unpackHour(&types.AttributeValueMemberN{Value: bad}); ok {
			t.Errorf("%q read as counters", bad)
		}
	}
}
