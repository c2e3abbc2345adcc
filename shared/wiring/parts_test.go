package wiring

import (
	"errors"
	"slices"
	"testing"
	"unsafe"
)

// TestPartIsBuiltOnce: a part is built the first time it is asked for and
// is the same one after (an error too), a builder may ask for the parts it
// is made of, a part provided is never built, and providing one already
// built is refused.
func TestPartIsBuiltOnce(t *testing.T) {
	b := &Base{}
	inner, outer, failing, given := NewKey("inner"), NewKey("outer"), NewKey("failing"), NewKey("given")
	builds := 0
	buildInner := func(*Base) (unsafe.Pointer, error) { builds++; n := 7; return unsafe.Pointer(&n), nil }
	p1, _ := b.Part(outer, func(b *Base) (unsafe.Pointer, error) {
		p, err := b.Part(inner, buildInner)
		return p, err
	})
	p2, _ := b.Part(inner, buildInner)
	if builds != 1 || p1 != p2 || *(*int)(p2) != 7 {
		t.Errorf("built %d times, %p and %p", builds, p1, p2)
	}
	boom := errors.New("boom")
	for range 2 {
		if _, err := b.Part(failing, func(*Base) (unsafe.Pointer, error) { builds++; return nil, boom }); err != boom {
			t.Errorf("failing part: %v", err)
		}
	}
	if builds != 2 {
		t.Errorf("a failed part was built %d times", builds-1)
	}
	n := 3
	if err := b.Provide(given, unsafe.Pointer(&n)); err != nil {
		t.Fatal(err)
	}
	if p, _ := b.Part(given, buildInner); p != unsafe.Pointer(&n) || builds != 2 {
		t.Error("a provided part was built")
	}
	if err := b.Provide(inner, unsafe.Pointer(&n)); err == nil {
		t.Error("a part already built was provided")
	}
	if got, want := b.Built(), []string{"inner", "outer", "failing"}; !slices.Equal(got, want) {
		t.Errorf("Built() = %v, want %v", got, want)
	}
}
