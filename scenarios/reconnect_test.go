package scenarios

import (
	"errors"
	"strings"
	"testing"
)

func TestReconnectValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		client string
		path   string // "" when the scenario is valid
		want   string
	}{
		// A drop after some chunks, back after a while: valid.
		{"valid", "  reconnect: {afterChunks: 3, delay: 2s}\n", "", ""},
		// Back at once: valid.
		{"no delay", "  reconnect: {afterChunks: 1}\n", "", ""},
		// No chunk count: the drop would never happen.
		{"no afterChunks", "  reconnect: {delay: 1s}\n", "client.reconnect.afterChunks", "expected >= 1"},
		// Away longer than any runtime keeps the execution.
		{"delay too long", "  reconnect: {afterChunks: 2, delay: 30s}\n", "client.reconnect.delay", "expected between 0 and 5s"},
		// A client that leaves cannot also come back.
		{"with abort", "  abort: {afterChunks: 9}\n  reconnect: {afterChunks: 2}\n", "client.reconnect", "at most one client action"},
		// Typos in the reconnect are caught.
		{"unknown field", "  reconnect: {afterChunk: 2}\n", "client.reconnect.afterChunk", "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "name: r\ntiming:\n  ttft: 10ms\n  itl: 10ms\nturns:\n  - text: {tokens: 20}\nclient:\n" + tc.client
			s, err := Parse("r.yaml", []byte(src))
			if tc.path == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if s.Client.Reconnect == nil || s.Render(1).Expected().Client.Reconnect == nil {
					t.Fatal("the reconnect is not in the scenario's expectation")
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Path, tc.path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one at %s containing %q", err, tc.path, tc.want)
			}
		})
	}
}
