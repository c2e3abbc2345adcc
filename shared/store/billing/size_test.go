package billing_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/store/billing"
)

type item = map[string]types.AttributeValue

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// The rules of "DynamoDB item sizes and formats", one per bullet. The page
// has no worked example of a whole item, so the last test applies the rules
// to an item of the GameScores table used across the developer guide.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html

func TestItemSizesAndFormats_StringIsNamePlusUTF8Bytes(t *testing.T) {
	for _, c := range []struct {
		it   item
		want int
	}{
		{item{"name": s("hello")}, 4 + 5},
		{item{"name": s("héllo")}, 4 + 6}, // é is two bytes in UTF-8
		{item{"née": s("x")}, 4 + 1},      // so is a name's
		{item{"name": s("")}, 4},          // an empty string is its name
	} {
		if got := billing.ItemSize(c.it); got != c.want {
			t.Errorf("ItemSize(%v) = %d, want %d", c.it, got, c.want)
		}
	}
}

func TestItemSizesAndFormats_NumberIsOneBytePerTwoSignificantDigitsPlusOne(t *testing.T) {
	for _, c := range []struct {
		num  string
		want int
	}{
		{"0", 1}, // no significant digit
		{"7", 2},
		{"27", 2},
		{"461", 3}, // 3 digits: 2 bytes, rounded up, + 1
		{"5842", 3},
		{"1786461547", 6},
		{"100", 2},    // trailing zeros trimmed: 1 digit
		{"00042", 2},  // leading zeros trimmed
		{"0.5", 2},    // the zero before the point is leading
		{"-0.010", 2}, // the sign is not a digit by the documented rule
		{"12345.6789", 6},
		{"1.5E3", 2}, // an exponent is not a digit
		{strings.Repeat("9", 38), 20},
	} {
		if got := billing.ItemSize(item{"n": n(c.num)}) - 1; got != c.want {
			t.Errorf("size of number %s = %d, want %d", c.num, got, c.want)
		}
	}
}

func TestItemSizesAndFormats_BinaryIsRawBytes(t *testing.T) {
	// Four raw bytes, eight characters in base64: the raw length counts.
	got := billing.ItemSize(item{"b": &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 255}}})
	if got != 1+4 {
		t.Errorf("ItemSize = %d, want 5", got)
	}
}

func TestItemSizesAndFormats_NullAndBooleanAreOneByte(t *testing.T) {
	got := billing.ItemSize(item{
		"ok":   &types.AttributeValueMemberBOOL{Value: true},
		"none": &types.AttributeValueMemberNULL{Value: true},
	})
	if want := 2 + 1 + 4 + 1; got != want {
		t.Errorf("ItemSize = %d, want %d", got, want)
	}
}

func TestItemSizesAndFormats_ListAndMapAreThreeBytesPlusOnePerElement(t *testing.T) {
	for _, c := range []struct {
		name string
		it   item
		want int
	}{
		{"empty list", item{"l": &types.AttributeValueMemberL{}}, 1 + 3},
		{"empty map", item{"m": &types.AttributeValueMemberM{}}, 1 + 3},
		{"list", item{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("ab"), n("27")}}},
			1 + 3 + (2 + 1) + (2 + 1)},
		{"map", item{"m": &types.AttributeValueMemberM{Value: item{"ab": s("cd"), "e": n("1")}}},
			1 + 3 + (2 + 2 + 1) + (1 + 2 + 1)},
		{"nested", item{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberM{Value: item{"k": s("v")}},
		}}}, 1 + 3 + (3 + (1 + 1 + 1) + 1)},
	} {
		if got := billing.ItemSize(c.it); got != c.want {
			t.Errorf("%s: ItemSize = %d, want %d", c.name, got, c.want)
		}
	}
}

// The page does not size sets; they are the sum of their members (see
// valueSize).
func TestItemSize_SetIsSumOfMembers(t *testing.T) {
	got := billing.ItemSize(item{
		"ss": &types.AttributeValueMemberSS{Value: []string{"a", "bcd"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"27", "461"}},
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}},
	})
	if want := (2 + 4) + (2 + 2 + 3) + (2 + 3); got != want {
		t.Errorf("ItemSize = %d, want %d", got, want)
	}
}

func TestItemSizesAndFormats_GameScoresItem(t *testing.T) {
	// The GameScores item of
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html
	got := billing.ItemSize(item{
		"UserId":    s("101"),             // 6 + 3
		"GameTitle": s("Galaxy Invaders"), // 9 + 15
		"TopScore":  n("5842"),            // 8 + 3
		"Wins":      n("21"),              // 4 + 2
		"Losses":    n("72"),              // 6 + 2
	})
	if got != 58 {
		t.Errorf("ItemSize = %d, want 58", got)
	}
}

// randomValue draws a value of any type, nested up to depth levels.
func randomValue(r *rand.Rand, depth int) types.AttributeValue {
	str := func() string { return strings.Repeat("é", r.IntN(5)) + strconv.Itoa(r.IntN(1000)) }
	kinds := 8
	if depth > 0 {
		kinds = 10
	}
	switch r.IntN(kinds) {
	case 0:
		return s(str())
	case 1:
		return n(strconv.FormatFloat(r.NormFloat64()*1e6, 'f', r.IntN(6), 64))
	case 2:
		return &types.AttributeValueMemberB{Value: []byte(str())}
	case 3:
		return &types.AttributeValueMemberBOOL{Value: r.IntN(2) == 0}
	case 4:
		return &types.AttributeValueMemberNULL{Value: true}
	case 5:
		return &types.AttributeValueMemberSS{Value: []string{str(), str() + "x"}}
	case 6:
		return &types.AttributeValueMemberNS{Value: []string{strconv.Itoa(r.IntN(1e6)), "0.25"}}
	case 7:
		return &types.AttributeValueMemberBS{Value: [][]byte{[]byte(str())}}
	case 8:
		l := &types.AttributeValueMemberL{}
		for range r.IntN(4) {
			l.Value = append(l.Value, randomValue(r, depth-1))
		}
		return l
	default:
		return &types.AttributeValueMemberM{Value: randomItem(r, depth-1)}
	}
}

func randomItem(r *rand.Rand, depth int) item {
	it := item{}
	for i := range r.IntN(6) {
		it["a"+strconv.Itoa(i)+strings.Repeat("ß", r.IntN(3))] = randomValue(r, depth)
	}
	return it
}

// Property: an item's size is the sum of its attributes' sizes, so splitting
// an item in two splits its size.
func TestItemSize_AdditiveOverAttributes(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 1))
	for range 500 {
		whole := randomItem(r, 3)
		a, b := item{}, item{}
		for k, v := range whole {
			if r.IntN(2) == 0 {
				a[k] = v
			} else {
				b[k] = v
			}
		}
		if got, want := billing.ItemSize(whole), billing.ItemSize(a)+billing.ItemSize(b); got != want {
			t.Fatalf("ItemSize(%v) = %d, parts sum to %d", whole, got, want)
		}
	}
}
