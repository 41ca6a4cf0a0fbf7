package protocol

import (
	"strings"
	"testing"
)

// stub is a dialect with only a name and rules, for registry tests.
type stub struct {
	name  string
	rules []RuleSpec
}

func (s stub) Name() string                            { return s.name }
func (stub) Options() []OptionSpec                     { return nil }
func (s stub) Rules() []RuleSpec                       { return s.rules }
func (stub) Configure(string, Options) (Client, error) { return nil, nil }

var _ Dialect = stub{}

// TestRegistryLookupAndWith: an unknown name is an error listing the known ones; With adds a
// dialect and its rules without changing the original; duplicate names, empty names and a rule
// another dialect (or protocol) declares are refused.
func TestRegistryLookupAndWith(t *testing.T) {
	t.Parallel()
	r, err := NewRegistry(stub{name: "compose"}, stub{name: "ag-ui", rules: []RuleSpec{{ID: "R-agui-run", Kind: RuleStructure, Text: "one run"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Lookup("sim-talk"); err == nil || !strings.Contains(err.Error(), `"sim-talk"`) || !strings.Contains(err.Error(), "compose") {
		t.Errorf("Lookup(unknown): %v, want an error naming it and the known dialects", err)
	}
	r2, err := r.With(stub{name: "echo", rules: []RuleSpec{{ID: "R-echo-text", Kind: RuleContent, Text: "the echoed text"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Lookup("echo"); err != nil {
		t.Errorf("With: %v", err)
	}
	if got := strings.Join(r2.Names(), ","); got != "compose,ag-ui,echo" {
		t.Errorf("With: Names() = %s, want the registration order compose,ag-ui,echo", got)
	}
	if k := r2.Rules().Kind("R-echo-text"); k != RuleContent {
		t.Errorf("With: the new dialect's rule has kind %s, want content", k)
	}
	if _, err := r.Lookup("echo"); err == nil {
		t.Error("With changed the original registry")
	}
	if _, err := r.Rules().Parse("R-echo-text"); err == nil {
		t.Error("With changed the original registry's rules")
	}
	for _, taken := range []Rule{RTerminal, "R-agui-run"} {
		d := stub{name: "echo", rules: []RuleSpec{{ID: taken, Kind: RuleStructure, Text: "x"}}}
		if _, err := r.With(d); err == nil || !strings.Contains(err.Error(), string(taken)+" is declared twice") {
			t.Errorf("a dialect redeclaring %s: %v, want an error naming it", taken, err)
		}
	}
	if _, err := r.With(stub{name: "compose"}); err == nil || !strings.Contains(err.Error(), `"compose"`) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := NewRegistry(stub{name: ""}); err == nil {
		t.Error("empty name accepted")
	}
}

// endpoint is a stub inference endpoint's dialect; swarm one that plays swarm scenarios.
type (
	endpoint struct {
		stub
		spec EndpointSpec
	}
	swarm struct {
		stub
		plays bool
	}
)

func (e endpoint) Endpoint() EndpointSpec { return e.spec }
func (s swarm) PlaysSwarm() bool          { return s.plays }

var (
	_ EndpointDialect = endpoint{}
	_ SwarmPlayer     = swarm{}
)

// TestRegistryCapabilities: the registry answers for its dialects what the load generator and
// the command line ask without naming one: the endpoint dialects and their specs, which plays
// swarm scenarios, which takes an option (its placeholders and default), and how each endpoint
// dialect sends an API key. A dialect without a capability is not counted as having it.
func TestRegistryCapabilities(t *testing.T) {
	t.Parallel()
	bearer := EndpointSpec{APIKeyEnv: "A_KEY", APIKeyHeader: "Authorization", APIKeyPrefix: "Bearer ", MaxTokensFields: []string{MaxTokensField, BothMaxTokensFields}}
	path := func(def string, placeholders ...string) []OptionVar {
		var s string
		return []OptionVar{PathVar(OptionSpec{Key: "path", Help: "the path", Default: def, Placeholders: placeholders}, &s)}
	}
	r, err := NewRegistry(
		withOptions{stub{name: "chat"}, path("/chat/{slug}", "slug")},
		endpoint{stub: stub{name: "a"}, spec: bearer},
		swarm{stub: stub{name: "team"}, plays: true},
		swarm{stub: stub{name: "solo"}},
		endpoint{stub: stub{name: "b"}, spec: EndpointSpec{APIKeyEnv: "B_KEY", APIKeyHeader: "x-api-key"}},
		endpoint{stub: stub{name: "c"}, spec: bearer},
		withOptions{stub{name: "route"}, path("/route")},
		withOptions{stub{name: "route2"}, path("/route")},
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Endpoints(), ","); got != "a,b,c" {
		t.Errorf("Endpoints() = %s, want a,b,c", got)
	}
	if e, ok := r.Endpoint("a"); !ok || e.APIKeyEnv != "A_KEY" || len(e.MaxTokensFields) != 2 {
		t.Errorf("Endpoint(a) = %+v, %t", e, ok)
	}
	for _, n := range []string{"chat", "team", "unknown"} {
		if e, ok := r.Endpoint(n); ok {
			t.Errorf("Endpoint(%s) = %+v: not an endpoint dialect", n, e)
		}
	}
	if name, value := bearer.APIKey("k"); name != "Authorization" || value != "Bearer k" {
		t.Errorf("APIKey = %s: %s, want Authorization: Bearer k", name, value)
	}
	if got, want := r.APIKeyHelp(), "a, c: Authorization: Bearer KEY, default $A_KEY; b: x-api-key: KEY, default $B_KEY"; got != want {
		t.Errorf("APIKeyHelp() = %q, want %q", got, want)
	}
	for n, want := range map[string]bool{"team": true, "solo": false, "chat": false, "unknown": false} {
		if got := r.PlaysSwarm(n); got != want {
			t.Errorf("PlaysSwarm(%s) = %t, want %t", n, got, want)
		}
	}
	if got := strings.Join(r.Taking("path"), ","); got != "chat,route,route2" {
		t.Errorf("Taking(path) = %s", got)
	}
	if got, want := r.OptionHelp("path"), "chat {slug} (default /chat/{slug}), route, route2 (default /route)"; got != want {
		t.Errorf("OptionHelp(path) = %q, want %q", got, want)
	}
	if got := r.OptionHelp("nothing"); got != "" || len(r.Taking("nothing")) != 0 {
		t.Errorf("an option no dialect takes: %q, %v", got, r.Taking("nothing"))
	}
	if h := r.Help(); !strings.Contains(h, "      path: the path (default /chat/{slug})\n") {
		t.Errorf("Help() does not show the default:\n%s", h)
	}
}

// withOptions is a stub dialect that takes options.
type withOptions struct {
	stub
	vars []OptionVar
}

func (w withOptions) Options() []OptionSpec { return Specs(w.vars) }

// TestOptionVars: Apply sets every option given, keeps the defaults of the others, and refuses
// an unknown key, a value of the wrong type and a path template with a placeholder its option
// does not have, each naming the option.
func TestOptionVars(t *testing.T) {
	t.Parallel()
	path, model := "/a/{id}", "m"
	var strict, noTruth bool
	vars := func() []OptionVar {
		return []OptionVar{
			PathVar(OptionSpec{Key: "path", Help: "p", Placeholders: []string{"id"}}, &path),
			StringVar(OptionSpec{Key: "model", Help: "m"}, &model),
			BoolVar(OptionSpec{Key: "strict", Help: "s"}, &strict),
			NoGroundTruthVar("the test's", &noTruth),
		}
	}
	if err := (Options{"model": "x", "strict": "true", "noGroundTruth": true}).Apply("d", vars()); err != nil {
		t.Fatal(err)
	}
	if path != "/a/{id}" || model != "x" || !strict || !noTruth {
		t.Errorf("after Apply: path %q model %q strict %t noGroundTruth %t", path, model, strict, noTruth)
	}
	if err := (Options{"path": "/b/{id}/c"}).Apply("d", vars()); err != nil || path != "/b/{id}/c" {
		t.Errorf("a path with its placeholder: %v, path %q", err, path)
	}
	for wantErr, o := range map[string]Options{
		"d: unknown option colour (known: path, model, strict, noGroundTruth)":             {"colour": "red"},
		"option strict: \"yes\", want true or false":                                       {"strict": "yes"},
		"option model: 3 (int), want a string":                                             {"model": 3},
		`option path: path template "/b/{name}": unknown placeholder {name} (known: {id})`: {"path": "/b/{name}"},
	} {
		if err := o.Apply("d", vars()); err == nil || err.Error() != wantErr {
			t.Errorf("Apply(%v) = %v, want %q", o, err, wantErr)
		}
	}
	if specs := Specs(vars()); len(specs) != 4 || specs[3].Key != "noGroundTruth" || !strings.Contains(specs[3].Help, "the test's model is not the mock") {
		t.Errorf("Specs = %+v", specs)
	}
}
