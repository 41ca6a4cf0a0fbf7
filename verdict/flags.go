package verdict

import (
	"fmt"

	"github.com/streambench/streambench/measure"

	"github.com/streambench/streambench/protocol"
)

// ParseFlags makes the judge's config from --threshold, --max-regression and --allow; the
// first bad one is the error, naming its flag.
func ParseFlags(rules *protocol.RuleSet, thresholds, regressions, allow []string) (Config, error) {
	cfg := Config{Rules: rules}
	for _, expr := range thresholds {
		t, err := ParseThresholdIn(rules, expr)
		if err != nil {
			return cfg, fmt.Errorf("--threshold: %w", err)
		}
		cfg.Thresholds = append(cfg.Thresholds, t)
	}
	for _, expr := range regressions {
		g, err := ParseRegression(expr)
		if err != nil {
			return cfg, fmt.Errorf("--max-regression: %w", err)
		}
		cfg.Regressions = append(cfg.Regressions, g)
	}
	for _, name := range allow {
		rule, err := rules.Parse(name)
		if err != nil {
			return cfg, fmt.Errorf("--allow: %w", err)
		}
		cfg.Allow = append(cfg.Allow, rule)
	}
	return cfg, nil
}

// ParseThresholdIn is ParseThreshold, refusing a rule scope rules (nil: any) does not have.
func ParseThresholdIn(rules *protocol.RuleSet, expr string) (Threshold, error) {
	t, err := ParseThreshold(expr)
	if err != nil {
		return t, err
	}
	return t, checkRule(rules, t)
}

// checkRule refuses a threshold scoped to an unknown rule, which would measure no violation
// and pass whatever the run broke.
func checkRule(rules *protocol.RuleSet, t Threshold) error {
	rule, ok := t.Selector.Scope["rule"]
	if !ok || rules == nil || t.Selector.def.Name != measure.Violations {
		return nil
	}
	if _, err := rules.Parse(rule); err != nil {
		return &ThresholdError{Expr: t.Expr, Reason: err.Error()}
	}
	return nil
}
