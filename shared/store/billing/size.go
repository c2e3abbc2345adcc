package billing

import (
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemSize is the size in bytes DynamoDB bills an item at: for every
// attribute, the UTF-8 length of its name plus the size of its value.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

// valueSize is the size of one value, without the name that holds it.
func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value) // Go strings hold UTF-8, so len is the byte count
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value) // raw bytes, not their base64 form on the wire
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	// The item-size page does not mention sets. A set is sized as the sum of
	// its members, each by its scalar rule, with no container overhead: sets
	// are not lists or maps, which are the only types documented to carry
	// one.
	case *types.AttributeValueMemberSS:
		return sum(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return sum(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return sum(v.Value, func(b []byte) int { return len(b) })
	// A list or map costs 3 bytes of its own, and each element 1 byte more
	// than its value (plus, in a map, its name).
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	}
	return 0 // an unknown union member: the SDK could not decode it
}

// numberSize follows the documented rule: significant digits (leading and
// trailing zeros trimmed) take one byte per two, rounded up, plus one byte.
// The sign, the decimal point and an exponent are not digits and cost
// nothing by that rule, although DynamoDB is reported to charge a negative
// number one byte more; the documented rule is kept so the figure can be
// checked against the page.
func numberSize(n string) int {
	_, digits, _ := decimal(n)
	return (len(digits)+1)/2 + 1
}

// decimal splits a DynamoDB number into its sign, its significant digits
// and the power of ten they are multiplied by: "-0.0120" is -, "12", -3.
// Zero has no digits. Text that is not a number yields what can be read of
// it, which is all billing needs (DynamoDB refuses such numbers anyway).
func decimal(n string) (neg bool, digits string, exp int) {
	neg = strings.HasPrefix(n, "-")
	m := strings.TrimLeft(n, "+-")
	if i := strings.IndexAny(m, "eE"); i >= 0 {
		exp, _ = strconv.Atoi(m[i+1:])
		m = m[:i]
	}
	whole, frac, _ := strings.Cut(m, ".")
	exp -= len(frac)
	m = strings.TrimLeft(whole+frac, "0")
	digits = strings.TrimRight(m, "0")
	return neg, digits, exp + len(m) - len(digits)
}

// sum adds up size over a set's members.
func sum[T any](members []T, size func(T) int) int {
	n := 0
	for _, m := range members {
		n += size(m)
	}
	return n
}
