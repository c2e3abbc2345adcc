// Package difforder checks that the tests print their diffs in one order:
// got before want, cmp.Diff(got, want) with "(-got +want)" (the style guide's
// "got before want, with cmp.Diff"), so a reader of any failure knows which
// side is which without looking at the test.
package difforder

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// wrongOrder is what the other order looks like: the message's marker, or
// a cmp.Diff whose first argument is named as the expectation.
var wrongOrder = []*regexp.Regexp{
	regexp.MustCompile(`-want \+got`),
	regexp.MustCompile(`cmp\.Diff\((?:[A-Za-z_]\w*\.)?(?:want|expected|exp)\w*\s*[,)]`),
}

// misordered are the lines of src that print a diff in the other order.
func misordered(src string) []string {
	var out []string
	for line := range strings.Lines(src) {
		for _, re := range wrongOrder {
			if re.MatchString(line) {
				out = append(out, strings.TrimSpace(line))
				break
			}
		}
	}
	return out
}

func TestDiffsPrintGotBeforeWant(t *testing.T) {
	root := filepath.Join("..", "..")
	self, err := filepath.Abs("difforder_test.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		if abs, _ := filepath.Abs(path); abs == self {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for _, l := range misordered(string(src)) {
			t.Errorf("%s prints a diff want before got (write cmp.Diff(got, want) and \"(-got +want)\"): %s", path, l)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files: the walk did not reach the module", checked)
	}
}

// TestMisorderedCatchesTheOtherOrder: the check sees each form the other
// order took in this tree, and passes the right one.
func TestMisorderedCatchesTheOtherOrder(t *testing.T) {
	bad := []string{
		`t.Errorf("runs mismatch (-want +got):\n%s", diff)`,
		`if diff := cmp.Diff(want, runs); diff != "" {`,
		`if d := cmp.Diff(c.want, got); d != "" {`,
		`if diff := cmp.Diff(tc.want, sum); diff != "" {`,
		`if diff := cmp.Diff(wantSum, sum); diff != "" {`,
		`if diff := cmp.Diff(expected, got, opts...); diff != "" {`,
	}
	for _, l := range bad {
		if len(misordered(l)) != 1 {
			t.Errorf("misordered missed %s", l)
		}
	}
	good := []string{
		`t.Errorf("runs mismatch (-got +want):\n%s", diff)`,
		`if diff := cmp.Diff(runs, want); diff != "" {`,
		`if diff := cmp.Diff(got, tc.want); diff != "" {`,
		`if d := cmp.Diff(wanted(x), got); d != "" {`,
	}
	for _, l := range good {
		if got := misordered(l); len(got) != 0 {
			t.Errorf("misordered flags %s", l)
		}
	}
}
