package protocol

import (
	"fmt"
	"slices"
	"strings"
)

// Registry is a set of dialects by name and their rules, which the rest of streambench asks
// instead of importing a dialect. Immutable and safe for concurrent use.
type Registry struct {
	byName map[string]Dialect
	names  []string
	rules  *RuleSet
}

// NewRegistry returns a registry of ds; two dialects of one name, or a rule declared twice or
// amiss (NewRuleSet), are an error.
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

// Rules is every rule: SharedRules, then each dialect's own in registration order.
func (r *Registry) Rules() *RuleSet { return r.rules }

// Help describes every dialect and its options, one block each, for --help.
func (r *Registry) Help() string {
	var b strings.Builder
	for _, n := range r.names {
		fmt.Fprintf(&b, "  %s\n", n)
		for _, o := range r.byName[n].Options() {
			fmt.Fprintf(&b, "      %s: %s%s\n", o.Key, o.Help, optionDefault(o))
		}
	}
	return b.String()
}

// optionDefault is " (default D)", or "" for an option without a default to show.
func optionDefault(o OptionSpec) string {
	if o.Default == "" {
		return ""
	}
	return " (default " + o.Default + ")"
}

// Taking lists the dialects that take option key, in registration order.
func (r *Registry) Taking(key string) []string {
	return slices.DeleteFunc(slices.Clone(r.names), func(n string) bool {
		_, ok := r.option(n, key)
		return !ok
	})
}

func (r *Registry) option(name, key string) (OptionSpec, bool) {
	opts := r.byName[name].Options()
	if i := slices.IndexFunc(opts, func(o OptionSpec) bool { return o.Key == key }); i >= 0 {
		return opts[i], true
	}
	return OptionSpec{}, false
}

// OptionHelp says which dialects take option key, with its placeholders and default, dialects
// that say the same together: "sim-chat {slug} (default /api/chat/{slug}), ai-sdk (default
// /api/chat)". For a flag that sets the option in every dialect.
func (r *Registry) OptionHelp(key string) string {
	return groupNames(r.Taking(key), func(n string) string {
		o, _ := r.option(n, key)
		var b strings.Builder
		for _, p := range o.Placeholders {
			b.WriteString(" {" + p + "}")
		}
		return b.String() + optionDefault(o)
	}, ", ")
}

// groupNames joins names with what says of each, names that say the same together:
// "a, c SAYS" + sep + "b OTHER".
func groupNames(names []string, says func(name string) string, sep string) string {
	var order []string
	group := map[string][]string{}
	for _, n := range names {
		s := says(n)
		if _, ok := group[s]; !ok {
			order = append(order, s)
		}
		group[s] = append(group[s], n)
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = strings.Join(group[s], ", ") + s
	}
	return strings.Join(parts, sep)
}

// Endpoints lists the inference endpoint dialects (EndpointDialect), in registration order.
func (r *Registry) Endpoints() []string {
	return slices.DeleteFunc(slices.Clone(r.names), func(n string) bool {
		_, ok := r.byName[n].(EndpointDialect)
		return !ok
	})
}

// Endpoint returns dialect name's EndpointSpec; false when it is no EndpointDialect.
func (r *Registry) Endpoint(name string) (EndpointSpec, bool) {
	if e, ok := r.byName[name].(EndpointDialect); ok {
		return e.Endpoint(), true
	}
	return EndpointSpec{}, false
}

// APIKeyHelp says how each endpoint dialect sends an API key and its default variable:
// "openai-chat, openai-responses: Authorization: Bearer KEY, default $OPENAI_API_KEY; ..."
func (r *Registry) APIKeyHelp() string {
	says := func(n string) string {
		e, _ := r.Endpoint(n)
		name, value := e.APIKey("KEY")
		return ": " + name + ": " + value + ", default $" + e.APIKeyEnv
	}
	return groupNames(r.Endpoints(), says, "; ")
}

// PlaysSwarm reports whether dialect name's clients play swarm scenarios (SwarmPlayer).
func (r *Registry) PlaysSwarm(name string) bool {
	p, ok := r.byName[name].(SwarmPlayer)
	return ok && p.PlaysSwarm()
}
