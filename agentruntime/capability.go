package agentruntime

import (
	_ "embed"
	"fmt"
	"maps"

	"github.com/goccy/go-yaml"

	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
)

//go:embed models.yaml
var defaultModelsYAML []byte

// ModelInfo is one model registry entry: what the model can do.
type ModelInfo struct {
	Name     string `yaml:"name" json:"name"`         // the model name deployments use.
	Thinking bool   `yaml:"thinking" json:"thinking"` // says whether the model exposes thinking at all (R-thinking-capability).
}

// modelsFile is models.yaml's shape (and the optional "models:" list of a deployments file).
type modelsFile struct {
	Models []ModelInfo `yaml:"models"`
}

// modelRegistry maps model names to their capabilities.
type modelRegistry map[string]ModelInfo

// defaultModels parses the embedded registry; it panics on a broken embedded file.
func defaultModels() modelRegistry {
	var f modelsFile
	if err := yaml.UnmarshalWithOptions(defaultModelsYAML, &f, yaml.Strict()); err != nil {
		panic(fmt.Sprintf("agentruntime: embedded models.yaml is invalid: %v", err))
	}
	reg := modelRegistry{}
	for _, m := range f.Models {
		reg[m.Name] = m
	}
	return reg
}

// withModels returns the registry with extra entries added or replaced.
func (reg modelRegistry) withModels(name string, extra []ModelInfo) (modelRegistry, error) {
	out := maps.Clone(reg)
	for i, m := range extra {
		if m.Name == "" {
			return nil, fmt.Errorf("%s: models[%d].name: missing (every registry entry names a model)", name, i)
		}
		out[m.Name] = m
	}
	return out, nil
}

// thinks reports whether model can think; a model missing from the registry is taken to.
func (reg modelRegistry) thinks(model string) bool {
	m, ok := reg[model]
	return !ok || m.Thinking
}

// ModelThinks reports whether the deployment's model can think; without it no thinking frame
// reaches any client, whatever IncludeThinking says.
func (d *Deployment) ModelThinks() bool { return !d.noModelThinking }

// admitThinking is what the run forwards of a thinking piece: nothing from a model without
// thinking, and on the Sim dialects no more than the execution's budget (R-thinking-cap).
func (rn *run) admitThinking(piece string) string {
	f := rn.faults
	if !rn.dep.ModelThinks() && !f.ThinkingWithoutCapability {
		return ""
	}
	if f.UncappedThinking || (rn.dialect != simchat.Name && rn.dialect != simcanvas.Name) {
		return piece // the cap is the Sim seed's rule; compose streams its reasoning whole
	}
	return rn.seeds.thinking.Admit(piece)
}
