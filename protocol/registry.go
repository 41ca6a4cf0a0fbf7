package protocol

import (
	"fmt"
	"slices"
	"strings"
)

// Registry is a set of dialects by name, and the rules they check: what the load generator, the
// command line and the reports ask instead of importing a dialect (package protocol/dialects
// holds the one list streambench ships, dialects.Default). Immutable and safe for concurrent
// use; tests and library users build their own with NewRegistry or With, so nothing global is
// ever changed.
type Registry struct {
	byName map[string]Dialect
	names  []string
	rules  *RuleSet
}

// NewRegistry returns a registry of ds; two dialects with one name are an error, and so is a
// rule two of them declare (or one that SharedRules has), or one declared amiss (NewRuleSet).
func NewRegistry(ds ...Dialect) (*Registry, error) {
	r := &Registry{byName: make(map[string]Dialect, len(ds))}
	groups := [][]RuleSpec{SharedRules()}
	for _, d := range ds {
		name := d.Name()
		if name == "" {
			return nil, fmt.Errorf("dialects: a dialect (%T) has no name", d)
		}
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("dialects: two dialects are named %q", name)
		}
		r.byName[name] = d
		r.names = append(r.names, name)
		groups = append(groups, d.Rules())
	}
	rules, err := NewRuleSet(groups...)
	if err != nil {
		return nil, fmt.Errorf("dialects: %w", err)
	}
	r.rules = rules
	return r, nil
}

// With returns a new registry holding r's dialects and ds.
func (r *Registry) With(ds ...Dialect) (*Registry, error) {
	all := make([]Dialect, 0, len(r.names)+len(ds))
	for _, n := range r.names {
		all = append(all, r.byName[n])
	}
	return NewRegistry(append(all, ds...)...)
}

// Lookup returns the dialect named name, or an error naming it and the known dialects.
func (r *Registry) Lookup(name string) (Dialect, error) {
	if d, ok := r.byName[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("dialect %q unknown (known: %s)", name, strings.Join(r.names, ", "))
}

// Names lists the dialects in registration order.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Rules is every rule the registry's dialects check: SharedRules, then each dialect's own in
// registration order. It validates the rule names users write (gate --allow, a mix's allow
// list) and says each rule's kind.
func (r *Registry) Rules() *RuleSet { return r.rules }

// Help describes every dialect and its options, one block each, for --help.
func (r *Registry) Help() string {
	var b strings.Builder
	for _, n := range r.names {
		fmt.Fprintf(&b, "  %s\n", n)
		for _, o := range r.byName[n].Options() {
			fmt.Fprintf(&b, "      %s: %s\n", o.Key, o.Help)
		}
	}
	return b.String()
}
