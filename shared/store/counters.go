package store

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A test's runs of one hour are four counters: monitored passed and
// failed, and the other passed and failed (runs on branches the failure-rate
// monitor does not watch, or in uploads the infrastructure guard set aside).
// They are packed into one number attribute, nine decimal digits each, so
// that an upload adds all four with one blind ADD and an hour costs one
// attribute name instead of four: the bytes of a test's counter item are
// what every upload pays for. Nine digits hold a billion runs of one test
// in one hour; DynamoDB numbers hold 38 digits, and these use 36.
//
// Attribute names: h{unix hour} on the counter item (the hours of the last
// day or two), x{unix hour} on the test's meta item (older hours, folded
// there), d{unix day} on the counter item (the monitored counts of the
// folded hours, summed per day, two counters packed the same way).
// (attrHour, attrDay, attrOldHour in doc.go).
const counterDigits = 9

// hourCounts are one hour's runs of a test.
type hourCounts struct{ mp, mf, op, of int }

func (c hourCounts) add(o hourCounts) hourCounts {
	return hourCounts{c.mp + o.mp, c.mf + o.mf, c.op + o.op, c.of + o.of}
}

func (c hourCounts) zero() bool { return c == hourCounts{} }

// number is the packed attribute value.
func (c hourCounts) number() *types.AttributeValueMemberN {
	return packed(c.of, c.op, c.mf, c.mp)
}

// dayCounts are the monitored counts of a folded day.
type dayCounts struct{ mp, mf int }

func (c dayCounts) number() *types.AttributeValueMemberN { return packed(c.mf, c.mp) }

// packed writes counters, most significant first, nine digits each.
func packed(counters ...int) *types.AttributeValueMemberN {
	var b strings.Builder
	for i, n := range counters {
		if i == 0 {
			b.WriteString(strconv.Itoa(n))
		} else {
			fmt.Fprintf(&b, "%0*d", counterDigits, n)
		}
	}
	s := strings.TrimLeft(b.String(), "0")
	if s == "" {
		s = "0"
	}
	return &types.AttributeValueMemberN{Value: s}
}

// unpack reads n counters from a packed number, least significant first.
// DynamoDB may answer a number in exponent form, so it is parsed as a
// decimal of enough precision.
func unpack(av types.AttributeValue, n int) ([]int, bool) {
	num, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return nil, false
	}
	digits := num.Value
	if strings.Trim(digits, "0123456789") != "" { // not plain digits: exponent form
		f, _, err := big.ParseFloat(num.Value, 10, 256, big.ToNearestEven)
		if err != nil || f.Sign() < 0 {
			return nil, false
		}
		i, _ := f.Int(nil)
		digits = i.String()
	}
	width := n * counterDigits
	if len(digits) > width {
		return nil, false
	}
	digits = strings.Repeat("0", width-len(digits)) + digits
	out := make([]int, n)
	for k := range n {
		end := width - k*counterDigits
		v, _ := strconv.Atoi(digits[end-counterDigits : end])
		out[k] = v
	}
	return out, true
}

func unpackHour(av types.AttributeValue) (hourCounts, bool) {
	c, ok := unpack(av, 4)
	if !ok {
		return hourCounts{}, false
	}
	return hourCounts{mp: c[0], mf: c[1], op: c[2], of: c[3]}, true
}

func unpackDay(av types.AttributeValue) (dayCounts, bool) {
	c, ok := unpack(av, 2)
	if !ok {
		return dayCounts{}, false
	}
	return dayCounts{mp: c[0], mf: c[1]}, true
}

// numbered reads the unix hour or day of an attribute named prefix+digits.
func numbered(name, prefix string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || rest[0] == '0' && len(rest) > 1 {
		return 0, false
	}
	for _, c := range []byte(rest) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, err == nil
}

func hourAttr(prefix string, hour int64) string { return prefix + strconv.FormatInt(hour, 10) }
