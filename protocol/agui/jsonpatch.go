package agui

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// applyPatch applies a JSON Patch (RFC 6902) to doc, a decoded JSON value, and returns the
// patched document. doc is not modified: the patch works on a deep copy, so a patch that fails
// half-way leaves the state it was applied to as it was (RFC 6902 §5: the patch is atomic).
// All six operations are supported; pointers follow RFC 6901.
//
// Why our own and not a library: the checker needs the six operations on values encoding/json
// decoded, and an error that names the operation that failed; that is about 150 lines, while
// github.com/evanphx/json-patch works on bytes (a re-encode per delta) and would be the only
// new dependency of the protocol packages.
func applyPatch(doc any, patch []byte) (any, error) {
	var ops []map[string]json.RawMessage
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, fmt.Errorf("delta is not an array of JSON Patch operations: %w", err)
	}
	doc = deepCopy(doc)
	for i, raw := range ops {
		var err error
		if doc, err = applyOp(doc, raw); err != nil {
			return nil, fmt.Errorf("operation %d: %w", i, err)
		}
	}
	return doc, nil
}

func applyOp(doc any, raw map[string]json.RawMessage) (any, error) {
	var op, path, from string
	if err := json.Unmarshal(raw["op"], &op); err != nil {
		return nil, fmt.Errorf(`"op" is not a string`)
	}
	if err := json.Unmarshal(raw["path"], &path); err != nil {
		return nil, fmt.Errorf("%s: \"path\" is not a string", op)
	}
	value := func() (any, error) {
		v, ok := raw["value"]
		if !ok {
			return nil, fmt.Errorf("%s %s: no \"value\"", op, path)
		}
		var out any
		if err := json.Unmarshal(v, &out); err != nil {
			return nil, fmt.Errorf("%s %s: %w", op, path, err)
		}
		return out, nil
	}
	switch op {
	case "add", "replace", "test":
		v, err := value()
		if err != nil {
			return nil, err
		}
		switch op {
		case "add":
			return add(doc, path, v)
		case "replace":
			if _, err := get(doc, path); err != nil {
				return nil, fmt.Errorf("replace %s: %w", path, err)
			}
			d, err := remove(doc, path)
			if err != nil {
				return nil, err
			}
			return add(d, path, v)
		}
		got, err := get(doc, path)
		if err != nil {
			return nil, fmt.Errorf("test %s: %w", path, err)
		}
		if !reflect.DeepEqual(got, v) {
			return nil, fmt.Errorf("test %s: the value differs", path)
		}
		return doc, nil
	case "remove":
		return remove(doc, path)
	case "move", "copy":
		if err := json.Unmarshal(raw["from"], &from); err != nil {
			return nil, fmt.Errorf("%s %s: \"from\" is not a string", op, path)
		}
		v, err := get(doc, from)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", op, from, err)
		}
		if op == "move" {
			if strings.HasPrefix(path, from+"/") {
				return nil, fmt.Errorf("move from %s into its own child %s", from, path)
			}
			if doc, err = remove(doc, from); err != nil {
				return nil, err
			}
		} else {
			v = deepCopy(v)
		}
		return add(doc, path, v)
	}
	return nil, fmt.Errorf("unknown op %q", op)
}

// pointer splits an RFC 6901 pointer into its unescaped reference tokens.
func pointer(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	if path[0] != '/' {
		return nil, fmt.Errorf("pointer %q does not start with /", path)
	}
	toks := strings.Split(path[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

func index(tok string, n int, allowEnd bool) (int, error) {
	if tok == "-" && allowEnd {
		return n, nil
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || (tok != "0" && tok[0] == '0') {
		return 0, fmt.Errorf("array index %q is not a number", tok)
	}
	if i > n || (!allowEnd && i == n) {
		return 0, fmt.Errorf("array index %d out of range (length %d)", i, n)
	}
	return i, nil
}

func get(doc any, path string) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	cur := doc
	for _, t := range toks {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, fmt.Errorf("no member %q", t)
			}
			cur = v
		case []any:
			i, err := index(t, len(c), false)
			if err != nil {
				return nil, err
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%q: not inside an object or array", t)
		}
	}
	return cur, nil
}

// add sets path to v, returning the (possibly new) document.
func add(doc any, path string, v any) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return v, nil
	}
	parent, err := get(doc, joinPointer(toks[:len(toks)-1]))
	if err != nil {
		return nil, fmt.Errorf("add %s: %w", path, err)
	}
	last := toks[len(toks)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last] = v
		return doc, nil
	case []any:
		i, err := index(last, len(p), true)
		if err != nil {
			return nil, fmt.Errorf("add %s: %w", path, err)
		}
		p = append(p, nil)
		copy(p[i+1:], p[i:])
		p[i] = v
		return set(doc, toks[:len(toks)-1], p)
	}
	return nil, fmt.Errorf("add %s: the parent is not an object or array", path)
}

func remove(doc any, path string) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("remove: cannot remove the whole document")
	}
	parent, err := get(doc, joinPointer(toks[:len(toks)-1]))
	if err != nil {
		return nil, fmt.Errorf("remove %s: %w", path, err)
	}
	last := toks[len(toks)-1]
	switch p := parent.(type) {
	case map[string]any:
		if _, ok := p[last]; !ok {
			return nil, fmt.Errorf("remove %s: no member %q", path, last)
		}
		delete(p, last)
		return doc, nil
	case []any:
		i, err := index(last, len(p), false)
		if err != nil {
			return nil, fmt.Errorf("remove %s: %w", path, err)
		}
		return set(doc, toks[:len(toks)-1], append(p[:i:i], p[i+1:]...))
	}
	return nil, fmt.Errorf("remove %s: the parent is not an object or array", path)
}

// set replaces the value at toks (which exists) with v: arrays change identity when they grow.
func set(doc any, toks []string, v any) (any, error) {
	if len(toks) == 0 {
		return v, nil
	}
	parent, err := get(doc, joinPointer(toks[:len(toks)-1]))
	if err != nil {
		return nil, err
	}
	last := toks[len(toks)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last] = v
	case []any:
		i, _ := index(last, len(p), false)
		p[i] = v
	}
	return doc, nil
}

func joinPointer(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
