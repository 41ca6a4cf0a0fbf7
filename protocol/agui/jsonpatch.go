package agui

import (
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// applyPatch applies a JSON Patch (RFC 6902) to doc, the state's JSON (nil: no snapshot yet,
// the JSON null), and returns the patched document; doc is not modified, and a patch that
// fails half-way changes nothing (RFC 6902 §5: the patch is atomic). The operations are
// evanphx/json-patch's, the implementation Kubernetes uses: a well-kept library beats our own
// for a format with this many corner cases (pointer escapes, "-" indexes, test equality).
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
