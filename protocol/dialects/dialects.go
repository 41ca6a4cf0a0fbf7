// Package dialects is the registry of client dialects: the one list the load generator, the
// command line and the reports ask for the dialects streambench can drive, and for the rules
// they check. A dialect is one package (see protocol.Dialect) with its own rules; adding it to
// Default is the one line that makes it, and them, available everywhere. A Registry is immutable and safe for concurrent use; tests and
// library users build their own with New or With, so nothing global is ever changed.
package dialects

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/agui"
	"github.com/streambench/streambench/protocol/aisdk"
	"github.com/streambench/streambench/protocol/anthropicmessages"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/langgraph"
	"github.com/streambench/streambench/protocol/openaichat"
	"github.com/streambench/streambench/protocol/openairesponses"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
)

// Default returns the registry of every dialect streambench ships, in the order --help lists
// them.
func Default() *Registry {
	return must(New(
		simchat.New(),
		simcanvas.New(),
		compose.New(),
		openaichat.New(),
		anthropicmessages.New(),
		openairesponses.New(),
		aisdk.New(aisdk.Options{}),
		agui.New(agui.Options{}),
		langgraph.New(langgraph.Options{}),
	))
}

// Registry is a set of dialects by name, and the rules they check.
type Registry struct {
	byName map[string]protocol.Dialect
	names  []string
	rules  *protocol.RuleSet
}

// New returns a registry of ds; two dialects with one name are an error, and so is a rule
// two of them declare (or one that protocol.SharedRules has), or one declared amiss
// (protocol.NewRuleSet).
func New(ds ...protocol.Dialect) (*Registry, error) {
	r := &Registry{byName: make(map[string]protocol.Dialect, len(ds))}
	groups := [][]protocol.RuleSpec{protocol.SharedRules()}
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
	rules, err := protocol.NewRuleSet(groups...)
	if err != nil {
		return nil, fmt.Errorf("dialects: %w", err)
	}
	r.rules = rules
	return r, nil
}

// With returns a new registry holding r's dialects and ds.
func (r *Registry) With(ds ...protocol.Dialect) (*Registry, error) {
	all := make([]protocol.Dialect, 0, len(r.names)+len(ds))
	for _, n := range r.names {
		all = append(all, r.byName[n])
	}
	return New(append(all, ds...)...)
}

// Lookup returns the dialect named name, or an error naming it and the known dialects.
func (r *Registry) Lookup(name string) (protocol.Dialect, error) {
	if d, ok := r.byName[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("dialect %q unknown (known: %s)", name, strings.Join(r.names, ", "))
}

// Names lists the dialects in registration order.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Rules is every rule the registry's dialects check: protocol.SharedRules, then each
// dialect's own in registration order. It validates the rule names users write (gate
// --allow, a mix's allow list) and says each rule's kind.
func (r *Registry) Rules() *protocol.RuleSet { return r.rules }

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

func must(r *Registry, err error) *Registry {
	if err != nil {
		panic(err) // the built-in list has a duplicate name: a build defect, caught by tests
	}
	return r
}
