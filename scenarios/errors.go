package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// FieldError is one problem in a scenario, located by field path and (from Parse) position.
type FieldError struct {
	File         string // the scenario file ("" for a Scenario built in code).
	Line, Column int    // 1-based (0 when unknown).
	Path         string // the field path in YAML spelling, e.g. "turns[1].toolCalls[0].outcome".
	Problem      string // what is wrong and what was expected.
}

// Error formats the problem as "file:line:col: field path: problem", leaving out what is unknown.
func (e *FieldError) Error() string {
	where := ""
	if e.File != "" {
		where = e.File + ":"
	}
	if e.Line > 0 {
		where += fmt.Sprintf("%d:%d:", e.Line, e.Column)
	}
	if where != "" {
		where += " "
	}
	if e.Path != "" {
		where += "field " + e.Path + ": "
	}
	return where + e.Problem
}

func joinFieldErrors(errs []*FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	list := make([]error, len(errs))
	for i, e := range errs {
		list[i] = e
	}
	return errors.Join(list...)
}

// displayPath turns a goccy YAML path ("$.turns[0].text") into the form used in messages.
func displayPath(p string) string {
	return strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
}

func nodeError(node ast.Node, format string, args ...any) *FieldError {
	e := &FieldError{Path: displayPath(node.GetPath()), Problem: fmt.Sprintf(format, args...)}
	if tok := node.GetToken(); tok != nil && tok.Position != nil {
		e.Line, e.Column = tok.Position.Line, tok.Position.Column
	}
	return e
}

// locate fills e's position from the nearest existing node up its path.
func locate(file *ast.File, e *FieldError) {
	if file == nil || len(file.Docs) == 0 {
		return
	}
	path := e.Path
	for {
		query := "$"
		if path != "" {
			query = "$." + path
		}
		if p, err := yaml.PathString(query); err == nil {
			if node, err := p.FilterFile(file); err == nil && node != nil {
				if tok := node.GetToken(); tok != nil && tok.Position != nil {
					e.Line, e.Column = tok.Position.Line, tok.Position.Column
					return
				}
			}
		}
		if path == "" {
			e.Line, e.Column = 1, 1
			return
		}
		path = parentPath(path)
	}
}

// parentPath drops the last segment of a field path: "a.b[2]" → "a.b", "a.b" → "a", "a" → "".
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// yamlErrorToField converts a goccy error into a FieldError with its position and path.
func yamlErrorToField(filename string, file *ast.File, err error) (*FieldError, bool) {
	var fe *FieldError
	if errors.As(err, &fe) {
		fe.File = filename
		return fe, true
	}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return nil, false
	}
	out := &FieldError{File: filename, Problem: ye.GetMessage()}
	tok := ye.GetToken()
	if tok != nil && tok.Position != nil {
		out.Line, out.Column = tok.Position.Line, tok.Position.Column
	}
	if file != nil && tok != nil {
		out.Path = pathOfToken(file, tok)
	}
	return out, true
}

// pathOfToken finds the node that owns tok and returns its field path ("" if none).
func pathOfToken(file *ast.File, tok *token.Token) string {
	f := &tokenFinder{tok: tok}
	for _, doc := range file.Docs {
		if doc.Body != nil {
			ast.Walk(f, doc.Body)
		}
	}
	return displayPath(f.path)
}

// tokenFinder is an ast.Visitor that records the path of the node whose token is tok.
type tokenFinder struct {
	tok  *token.Token
	path string
}

// Visit implements ast.Visitor.
func (f *tokenFinder) Visit(node ast.Node) ast.Visitor {
	if f.path != "" || node == nil {
		return nil
	}
	if mv, ok := node.(*ast.MappingValueNode); ok && mv.Key != nil && mv.Key.GetToken() == f.tok {
		// An unknown field error points at the key; its path is the value's.
		f.path = mv.Value.GetPath()
		return nil
	}
	if node.GetToken() == f.tok {
		f.path = node.GetPath()
		return nil
	}
	return f
}
