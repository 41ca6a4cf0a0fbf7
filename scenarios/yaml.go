package scenarios

import (
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// strict makes unknown fields errors, so a misspelt key never falls back to a default.
var strict = yaml.DisallowUnknownField()

func isMapping(node ast.Node) bool {
	switch node.Type() {
	case ast.MappingType, ast.MappingValueType:
		return true
	}
	return false
}

// decodePlain decodes a null or a mapping node into P (a type without UnmarshalYAML).
func decodePlain[P any](node ast.Node) (P, error) {
	var p P
	if node.Type() == ast.NullType {
		return p, nil
	}
	return p, yaml.NodeToValue(node, &p, strict)
}

// UnmarshalYAML accepts a bare duration ("300ms", a constant) or a mapping with kind.
func (d *Dist) UnmarshalYAML(node ast.Node) error {
	if node.Type() == ast.NullType || isMapping(node) {
		type plain Dist // drops the method set, so decoding the mapping does not recurse
		p, err := decodePlain[plain](node)
		*d = Dist(p)
		return err
	}
	var s string
	if err := yaml.NodeToValue(node, &s); err != nil {
		return nodeError(node, "expected a duration such as 300ms or a mapping with kind: constant|uniform|normal|lognormal")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return nodeError(node, "%q is not a duration; expected e.g. 300ms, 1.5s, or a mapping with kind", s)
	}
	*d = Constant(v)
	return nil
}

// UnmarshalYAML accepts a bare string (Literal) or a mapping {literal: ..., tokens: N}.
func (t *Text) UnmarshalYAML(node ast.Node) error {
	if node.Type() == ast.NullType || isMapping(node) {
		type plain Text
		p, err := decodePlain[plain](node)
		*t = Text(p)
		return err
	}
	var s string
	if err := yaml.NodeToValue(node, &s); err != nil {
		return nodeError(node, "expected a string (literal text) or {tokens: N}")
	}
	*t = Text{Literal: s}
	return nil
}
