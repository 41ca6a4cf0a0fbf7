package agentruntime

import (
	_ "embed"
	"fmt"

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

// modelThinking maps model names to whether they think: the embedded registry with extra (a
// deployments file's) entries added or replaced. It panics on a broken embedded file.
func modelThinking(name string, extra []ModelInfo) (map[string]bool, error) {
	var f deploymentsFile // models.yaml is a deployments file's "models:" list alone
	if err := yaml.UnmarshalWithOptions(defaultModelsYAML, &f, yaml.Strict()); err != nil {
		panic(fmt.Sprintf("agentruntime: embedded models.yaml is invalid: %v", err))
	}
	thinks := map[string]bool{}
	for _, m := range f.Models {
		thinks[m.Name] = m.Thinking
	}
	for i, m := range extra {
		if m.Name == "" {
			return nil, fmt.Errorf("%s: models[%d].name: missing (every registry entry names a model)", name, i)
		}
		thinks[m.Name] = m.Thinking
	}
	return thinks, nil
}

// ModelThinks reports whether the deployment's model can think; without it no thinking frame
// reaches any client, whatever IncludeThinking says.
func (d *Deployment) ModelThinks() bool { return !d.noModelThinking }

// admitThinking is what the run forwards of a thinking piece: nothing from a model without
// thinking, and on the Sim dialects no more than the execution's budget (R-thinking-cap).
func (rn *run) admitThinking(piece string) string {
	f := rn.faults
	if !rn.dep.ModelThinks() && !f.has("nothink-thinking") {
		return ""
	}
	if f.has("uncapped-thinking") || (rn.dialect != simchat.Name && rn.dialect != simcanvas.Name) {
		return piece // the cap is the Sim seed's rule; compose streams its reasoning whole
	}
	return rn.seeds.thinking.Admit(piece)
}
