package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPatchGateway: portkey/patch-gateway.cjs adds overrideGlobalObjects: false to the one
// serve({...}) call of the 1.15.2 bundle, leaves a patched bundle alone, and refuses, by name,
// a bundle without the expected text. Needs node; skipped without it.
func TestPatchGateway(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found")
	}
	const stock = `;const Vu=` + "`http://localhost:${Ku}`" + `;Gu(e({fetch:Lu.fetch,port:Ku})),console.clear();`
	const patched = `;const Vu=` + "`http://localhost:${Ku}`" + `;Gu(e({fetch:Lu.fetch,port:Ku,overrideGlobalObjects:false})),console.clear();`
	for _, c := range []struct {
		name, in, want, say string
		ok                  bool
	}{
		// The stock bundle: patched in place.
		{"stock", stock, patched, "patched serve", true},
		// Run twice: the second run changes nothing.
		{"already patched", patched, patched, "already patched", true},
		// Another version's bundle: refused, unchanged.
		{"other bundle", `Gu(n({fetch:Xy.fetch,port:Zz}))`, `Gu(n({fetch:Xy.fetch,port:Zz}))`, "expected exactly one e({fetch:Lu.fetch,port:Ku})", false},
		// The call twice: ambiguous, refused.
		{"twice", stock + stock, stock + stock, "found 2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "start-server.js")
			if err := os.WriteFile(file, []byte(c.in), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("node", "portkey/patch-gateway.cjs", file).CombinedOutput()
			if (err == nil) != c.ok || !strings.Contains(string(out), c.say) {
				t.Errorf("exit error %v, output %q; want ok=%v and %q", err, out, c.ok, c.say)
			}
			got, _ := os.ReadFile(file)
			if string(got) != c.want {
				t.Errorf("file now %q, want %q", got, c.want)
			}
		})
	}
}
