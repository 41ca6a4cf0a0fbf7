package aisdk

import (
	"bytes"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/sse"
)

// FuzzObserve feeds arbitrary parts (one per line) to the checker: it must never panic, and a
// stream that is not the script's must never pass silently when it has parts that do not
// decode (R-framing).
func FuzzObserve(f *testing.F) {
	script := dialecttest.Script(f, "parallel-tools", 1)
	f.Add([]byte(joinLines(scriptParts(script, true, false))))
	f.Add([]byte("{\"type\":\"text-delta\",\"id\":\"x\",\"delta\":\"\\u00e9\"}\n[DONE]\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ground := range []bool{true, false} {
			c := NewChecker(&protocol.Session{Expected: script.Expected()}, Options{NoGroundTruth: !ground})
			bad := false
			for _, line := range bytes.Split(data, []byte("\n")) {
				var fr frame
				var s = c.sc
				if t := bytes.TrimSpace(line); string(t) != "[DONE]" && (fr.parse(&s, t) != nil || len(t) == 0 || t[0] != '{') {
					bad = true
				}
				c.Observe(&sse.Event{Data: line})
			}
			v := c.Finish(nil)
			if bad && !hasRule(v, protocol.RFraming) && !hasRule(v, protocol.RTerminal) {
				t.Fatalf("undecodable part passed: %v", v)
			}
		}
	})
}

func joinLines(parts []string) string {
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	return b.String()
}

func hasRule(v []protocol.Violation, r protocol.Rule) bool {
	for _, x := range v {
		if x.Rule == r {
			return true
		}
	}
	return false
}
