package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// attributeTable reads doc.go: its package comment and the values of its
// attribute constants (attr…, Attr…), by name.
func attributeTable(t *testing.T) (doc string, attrs map[string]string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	attrs = map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, n := range vs.Names {
				b, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || !strings.HasPrefix(strings.ToLower(n.Name), "attr") {
					t.Errorf("doc.go: %s is not an attribute name spelled as a string", n.Name)
					continue
				}
				attrs[n.Name], _ = strconv.Unquote(b.Value)
			}
		}
	}
	return f.Doc.Text(), attrs
}

// TestDocTableMatchesTable: what doc.go says of the table is what
// TableSpec creates. Its header names every index with its keys, and
// only those; every key the access-pattern table writes as NAME=… or
// "Query INDEX" is one of the table's, and every attribute constant names
// one attribute, which no other constant names.
func TestDocTableMatchesTable(t *testing.T) {
	doc, attrs := attributeTable(t)
	spec := TableSpec("t")
	keys := map[string]bool{}
	for _, d := range spec.AttributeDefinitions {
		keys[aws.ToString(d.AttributeName)] = true
	}
	indexes := map[string]bool{}
	var header []string
	for _, g := range spec.GlobalSecondaryIndexes {
		name := aws.ToString(g.IndexName)
		indexes[name] = true
		header = append(header, name+" ("+aws.ToString(g.KeySchema[0].AttributeName)+"/"+aws.ToString(g.KeySchema[1].AttributeName)+")")
	}
	flat := strings.Join(strings.Fields(doc), " ")
	if want := "two indexes, " + strings.Join(header, " and "); len(header) != 2 || !strings.Contains(flat, want) {
		t.Errorf("doc.go does not say the table's indexes: want %q in its header", want)
	}
	for _, m := range regexp.MustCompile(`\b([A-Z][A-Z0-9]*)=`).FindAllStringSubmatch(doc, -1) {
		if !keys[m[1]] {
			t.Errorf("doc.go's table writes the key %s=, which is not a key of TableSpec", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`Query (GSI[0-9]+)`).FindAllStringSubmatch(doc, -1) {
		if !indexes[m[1]] {
			t.Errorf("doc.go's table queries %s, which is not an index of TableSpec", m[1])
		}
	}
	for k := range keys {
		if !strings.Contains(doc, k+"=") {
			t.Errorf("TableSpec's key %s appears in no access pattern of doc.go", k)
		}
	}
	if attrs["AttrTTL"] != "ttl" || !strings.Contains(doc, `TTL on the attribute "`+attrs["AttrTTL"]+`"`) {
		t.Errorf("doc.go's header does not name the TTL attribute %q", attrs["AttrTTL"])
	}
	byValue := map[string]string{}
	for name, v := range attrs {
		if other, ok := byValue[v]; ok {
			t.Errorf("%s and %s both name the attribute %q", name, other, v)
		}
		byValue[v] = name
	}
}

// expressionWord is a word of an expression that may be an attribute name:
// not a placeholder (#name, :value) nor a format verb.
var expressionWord = regexp.MustCompile(`(^|[^#:%A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_.]*)`)

// TestNoBareAttributeNames: the store's code names attributes only
// through doc.go's constants. A string literal (outside constant
// declarations and struct tags) that is an attribute name of the table, or
// an expression (a condition, an update, a key condition) that spells one,
// fails. One-letter names are left out: as literals they are mostly
// values (the outcome codes of attrLastUpload).
func TestNoBareAttributeNames(t *testing.T) {
	_, attrs := attributeTable(t)
	names := map[string]string{}
	for c, v := range attrs {
		if len(v) > 1 {
			names[v] = c
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") || p == "doc.go" {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				return n.Tok != token.CONST && n.Tok != token.IMPORT
			case *ast.Field: // its type, not its tag
				ast.Inspect(n.Type, func(m ast.Node) bool {
					if b, ok := m.(*ast.BasicLit); ok {
						checkLiteral(t, fset, b, names)
					}
					return true
				})
				return false
			case *ast.BasicLit:
				checkLiteral(t, fset, n, names)
			}
			return true
		})
	}
}

// placeholder is an expression's value placeholder (:name).
var placeholder = regexp.MustCompile(`:[a-z]`)

func checkLiteral(t *testing.T, fset *token.FileSet, b *ast.BasicLit, names map[string]string) {
	t.Helper()
	if b.Kind != token.STRING {
		return
	}
	s, err := strconv.Unquote(b.Value)
	if err != nil {
		return
	}
	if c, ok := names[s]; ok {
		t.Errorf("%s: %s names an attribute: use %s", fset.Position(b.Pos()), b.Value, c)
		return
	}
	expression := strings.Contains(s, "attribute_") || strings.Contains(s, "begins_with(") || placeholder.MatchString(s) ||
		strings.HasPrefix(s, "SET ") || strings.HasPrefix(s, "REMOVE ") || strings.HasPrefix(s, "ADD ")
	if !expression {
		return
	}
	for _, m := range expressionWord.FindAllStringSubmatch(s, -1) {
		if c, ok := names[m[2]]; ok {
			t.Errorf("%s: %s spells the attribute %s: use %s", fset.Position(b.Pos()), b.Value, m[2], c)
		}
	}
}
