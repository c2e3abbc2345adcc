// Package samtemplate reads template.yaml for the tests that check it or
// run its functions: goformation's parse, with every Ref to a resource read
// as the resource's logical id and every ${Resource} in a Sub kept as
// written, so a test can tell what refers to what (goformation alone
// resolves only parameters and pseudo parameters, and drops the rest).
package samtemplate

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
)

var parseMu sync.Mutex

// Parse reads the template at path.
func Parse(path string) (*cloudformation.Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// goformation registers its YAML tags in a package-level map on every
	// parse: two parallel tests parsing at once race on it.
	parseMu.Lock()
	defer parseMu.Unlock()
	tpl, err := goformation.ParseYAMLWithOptions(data, &intrinsics.ProcessorOptions{
		IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
			"Ref":     refByName,
			"Fn::Sub": subKeepingResources,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return tpl, nil
}

func refByName(name string, input, template any) any {
	if v := intrinsics.Ref(name, input, template); v != nil {
		return v
	}
	s, ok := input.(string)
	if !ok {
		return nil
	}
	if tpl, ok := template.(map[string]any); ok {
		if res, ok := tpl["Resources"].(map[string]any); ok {
			if _, ok := res[s]; ok {
				return s
			}
		}
	}
	return nil
}

var subVariable = regexp.MustCompile(`\$\{([.:0-9A-Za-z]+)\}`)

func subKeepingResources(name string, input, template any) any {
	s, ok := input.(string)
	if !ok {
		return intrinsics.FnSub(name, input, template)
	}
	return subVariable.ReplaceAllStringFunc(s, func(m string) string {
		v := m[2 : len(m)-1]
		if !strings.Contains(v, ".") {
			if r, ok := intrinsics.Ref("Ref", v, template).(string); ok {
				return r
			}
		}
		return m
	})
}

// LogicalID is the template's name for the function of a folder of
// functions/: get-test-details → GetTestDetailsFunction.
func LogicalID(folder string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(folder, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String() + "Function"
}

// PolicyStrings is a field of a policy statement as parsed (a string, a
// list of them, an intrinsic function) as a list of strings, an intrinsic
// function as its argument: template_test and internal/lambdatest read
// the functions' statements with it.
func PolicyStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, PolicyStrings(e)...)
		}
		return out
	case map[string]any:
		for _, a := range v {
			return PolicyStrings(a)
		}
	}
	return nil
}
