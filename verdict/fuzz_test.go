package verdict_test

import (
	"strings"
	"testing"

	"github.com/streambench/streambench/verdict"
)

// FuzzParseThreshold: any text either parses into a threshold that writes back to a selector
// which parses again, or fails with a *ThresholdError quoting it; never a panic.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"ttfc.p99<300ms", "errors<0.1%", "violations{rule=R-converge}==0", "leaks==0",
		"ttfc{scenario=a,dialect=b}.p99.9<=1s", "gap.p50>=1us", "errors==3", "ttfc{", "}<", "=", "<<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		th, err := verdict.ParseThreshold(expr)
		if err != nil {
			if !strings.Contains(err.Error(), "threshold ") {
				t.Fatalf("error %q does not say which threshold", err)
			}
			return
		}
		again, err := verdict.ParseThreshold(th.Selector.String() + th.Op + "0")
		if err != nil && !strings.Contains(err.Error(), "limit") {
			t.Fatalf("selector %q of %q does not parse back: %v", th.Selector, expr, err)
		}
		if err == nil && again.Selector.String() != th.Selector.String() {
			t.Fatalf("selector %q parsed back as %q", th.Selector, again.Selector)
		}
	})
}

// FuzzParseRegression: never a panic; errors name the expression.
func FuzzParseRegression(f *testing.F) {
	for _, s := range []string{"ttfc.p99=10%", "ttfc{scenario=a}.p50=25ms", "errors=1%", "ttfc.p99==1", "{=}="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if _, err := verdict.ParseRegression(expr); err != nil && !strings.Contains(err.Error(), "threshold ") {
			t.Fatalf("error %q does not say which expression", err)
		}
	})
}
