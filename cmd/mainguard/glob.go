package main

import (
	"context"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// globFiles lists the regular files matching pattern: a slash-separated
// glob (path.Match's syntax in each segment) where a segment "**" matches
// any number of folders, relative to root unless absolute. Only the folder
// below the pattern's literal start is walked, and .git folders never.
func globFiles(ctx context.Context, root, pattern string) ([]string, error) {
	pattern = filepath.ToSlash(pattern)
	base := root
	if path.IsAbs(pattern) {
		base = "/"
	}
	segs := strings.Split(strings.Trim(pattern, "/"), "/")
	// The literal start: segments without glob characters.
	lit := 0
	for lit < len(segs)-1 && !strings.ContainsAny(segs[lit], "*?[") {
		lit++
	}
	start := filepath.Join(base, filepath.FromSlash(strings.Join(segs[:lit], "/")))
	rest := segs[lit:]
	for _, s := range rest {
		if _, err := path.Match(s, ""); err != nil {
			return nil, err // a malformed pattern: say so rather than match nothing
		}
	}
	var out []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if p == start {
				return nil // nothing there: no match
			}
			return nil // an unreadable folder below: skipped
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != start {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(start, p)
		if err != nil {
			return nil
		}
		if matchSegments(rest, strings.Split(filepath.ToSlash(rel), "/")) {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// matchSegments matches a path's segments against a pattern's, where "**"
// stands for any number of segments.
func matchSegments(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		return matchSegments(pat[1:], segs) || (len(segs) > 0 && matchSegments(pat, segs[1:]))
	}
	if len(segs) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], segs[0])
	return ok && matchSegments(pat[1:], segs[1:])
}
