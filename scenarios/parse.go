package scenarios

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"slices"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Parse decodes one YAML scenario and validates it; each problem is a *FieldError.
func Parse(filename string, data []byte) (*Scenario, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FieldError{File: filename, Problem: "empty file; expected a scenario mapping with name and turns"}
	}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		if fe, ok := yamlErrorToField(filename, nil, err); ok {
			return nil, fe
		}
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	docs := 0
	for _, d := range file.Docs {
		if d.Body != nil {
			docs++
		}
	}
	if docs != 1 {
		return nil, &FieldError{File: filename, Line: 1, Column: 1, Problem: fmt.Sprintf("%d YAML documents; expected exactly one scenario per file", docs)}
	}
	body := file.Docs[0].Body
	if body == nil || !isMapping(body) {
		e := &FieldError{File: filename, Problem: "expected a mapping with name, timing and turns at the top level"}
		if body != nil {
			e.Line, e.Column = body.GetToken().Position.Line, body.GetToken().Position.Column
		}
		return nil, e
	}
	var s Scenario
	if err := decodeNode(body, &s); err != nil {
		if fe, ok := yamlErrorToField(filename, file, err); ok {
			return nil, fe
		}
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	errs := s.validate()
	for _, e := range errs {
		e.File = filename
		locate(file, e)
	}
	// Report in file order, which is how a reader fixes them.
	slices.SortStableFunc(errs, func(a, b *FieldError) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	if err := joinFieldErrors(errs); err != nil {
		return nil, err
	}
	return &s, nil
}

// decodeNode decodes an AST node, turning a decoder panic on hostile input into an error.
func decodeNode(node ast.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding YAML: %v", r)
		}
	}()
	return yaml.NodeToValue(node, v, strict)
}

// LoadFile reads and parses one scenario file.
func LoadFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading scenario: %w", err)
	}
	return Parse(path, data)
}
