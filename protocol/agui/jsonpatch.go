package agui

import (
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// applyPatch applies a JSON Patch (RFC 6902) to doc (nil: null) atomically and returns the new
// document, with evanphx/json-patch (Kubernetes's): a kept library beats our own for a format
// of this many corner cases.
func applyPatch(doc, patch []byte) ([]byte, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("not a JSON Patch: %w", err)
	}
	if doc == nil {
		doc = []byte("null")
	}
	out, err := p.ApplyWithOptions(doc, &jsonpatch.ApplyOptions{SupportNegativeIndices: false, EnsurePathExistsOnAdd: false})
	if err != nil {
		return nil, err
	}
	return out, nil
}
