package main

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/mainguard/mainguard/shared/queueapi"
)

// queueConfigGet is `mainguard queue config get`: the queue's settings,
// from getQueue; --json prints them as the queue record updateQueue
// answers (getQueue's answer without its pull requests).
func queueConfigGet(e *env, args []string) error {
	q, _, err := newQueueFlags(newFlags(cmdOf("queue config get")), e).parse(e, args, 0)
	if err != nil {
		return err
	}
	var v queueapi.QueueView
	if err := q.get("/getQueue", nil, &v); err != nil {
		return err
	}
	v.EnqueuedPullRequests = nil
	if q.json {
		return q.printAs(v)
	}
	q.printSettings(v)
	return nil
}

// queueConfigSet is `mainguard queue config set KEY=VALUE...`: one
// updateQueue call with every setting given, then the settings as it
// answers them. Keys are updateQueue's fields; an unknown key or a value
// of the wrong kind is a usage error, anything else the API judges.
func queueConfigSet(e *env, args []string) error {
	q, pos, err := newQueueFlags(newFlags(cmdOf("queue config set")), e).parse(e, args, -1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError("queue config set needs at least one KEY=VALUE, e.g. concurrency=2 (see `mainguard queue config set --help`)")
	}
	kinds := settingKinds()
	body := map[string]any{}
	for _, kv := range pos {
		key, value, ok := strings.Cut(kv, "=")
		kind, known := kinds[key]
		switch {
		case !ok:
			return usageError(fmt.Sprintf("queue config set: %q is not KEY=VALUE", kv))
		case !known:
			return usageError(fmt.Sprintf("queue config set: unknown setting %q; the settings are %s", key, strings.Join(slices.Sorted(maps.Keys(kinds)), ", ")))
		}
		if body[key], err = settingValue(kind, key, value); err != nil {
			return err
		}
	}
	var v queueapi.QueueView
	if printed, err := q.answer("/updateQueue", body, &v); err != nil || printed {
		return err
	}
	q.printSettings(v)
	return nil
}

// settingFields visits the settings of a queue record in the API's order:
// the fields of queueapi.QueueView, the type the API answers with (those
// of an embedded struct in its place, as JSON flattens them), but branch,
// enqueuedPullRequests and autopilotStatus, which are not settings.
// Reading them from that type keeps the keys of `config set` the API's
// own as it grows.
func settingFields(v queueapi.QueueView, visit func(name string, value reflect.Value)) {
	var walk func(rv reflect.Value)
	walk = func(rv reflect.Value) {
		for i := range rv.NumField() {
			f := rv.Type().Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(rv.Field(i))
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "branch" && name != "enqueuedPullRequests" && name != "autopilotStatus" {
				visit(name, rv.Field(i))
			}
		}
	}
	walk(reflect.ValueOf(v))
}

// settingKinds are the keys updateQueue takes, each with its kind:
// the record's settings and deleteRequiredStatuses (back to branch
// protection).
func settingKinds() map[string]reflect.Kind {
	kinds := map[string]reflect.Kind{"deleteRequiredStatuses": reflect.Bool}
	settingFields(queueapi.QueueView{}, func(name string, v reflect.Value) { kinds[name] = v.Kind() })
	return kinds
}

// settingValue reads a setting's value as its kind: a whole number, a
// number, on or off (true or false), a list separated by commas ("" is the
// empty list: require no status), or text.
func settingValue(kind reflect.Kind, key, value string) (any, error) {
	switch kind {
	case reflect.Int:
		n, err := strconv.Atoi(value)
		if err != nil {
			return nil, usageError(fmt.Sprintf("queue config set: %s takes a whole number, got %q", key, value))
		}
		return n, nil
	case reflect.Float64:
		x, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, usageError(fmt.Sprintf("queue config set: %s takes a number, got %q", key, value))
		}
		return x, nil
	case reflect.Bool:
		var b *bool
		if err := onOff(&b)(value); err != nil {
			return nil, usageError(fmt.Sprintf("queue config set: %s %v", key, err))
		}
		return *b, nil
	case reflect.Slice:
		list := []string{}
		for s := range strings.SplitSeq(value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		return list, nil
	}
	return value, nil
}

// printSettings writes the queue's settings one a line, as `config set`
// takes them.
func (q *queue) printSettings(v queueapi.QueueView) {
	q.line("%s", q)
	settingFields(v, func(name string, f reflect.Value) {
		text := fmt.Sprint(f.Interface())
		if list, ok := f.Interface().([]string); ok {
			switch {
			case list == nil:
				text = "(from branch protection)"
			case len(list) == 0:
				text = "(none)"
			default:
				text = strings.Join(list, ",")
			}
		}
		q.line("  %-28s %s", name, text)
	})
}
