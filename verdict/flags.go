package verdict

import (
	"fmt"

	"github.com/streambench/streambench/protocol"
)

// ParseFlags makes the judge's config from its flags' expressions: --threshold checks,
// --max-regression allowances and --allow rules, which must be of rules, as must a
// threshold's {rule=R} (the dialect
// registry's; it becomes Config.Rules). The first bad one is the error, naming its flag; a
// regression needs a baseline, which the caller sets (Config.Baseline).
func ParseFlags(rules *protocol.RuleSet, thresholds, regressions, allow []string) (Config, error) {
	cfg := Config{Rules: rules}
	for _, expr := range thresholds {
		t, err := ParseThreshold(expr)
		if err == nil {
			err = checkRule(rules, t)
		}
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

// CheckThresholdRule returns an error when expr, a threshold, does not parse or is scoped to a
// rule that rules does not have (a mix's thresholds are checked so before its run, as gate
// checks them after).
func CheckThresholdRule(rules *protocol.RuleSet, expr string) error {
	t, err := ParseThreshold(expr)
	if err != nil {
		return err
	}
	return checkRule(rules, t)
}

// checkRule returns an error for a threshold scoped to a rule that rules (nil: any rule) does
// not have: violations{rule=R-convergence}==0 would otherwise measure no violation at all and
// pass whatever the run broke.
func checkRule(rules *protocol.RuleSet, t Threshold) error {
	rule, ok := t.Selector.Scope["rule"]
	if !ok || rules == nil || t.Selector.kind != kindViolations {
		return nil
	}
	if _, err := rules.Parse(rule); err != nil {
		return &ThresholdError{Expr: t.Expr, Reason: err.Error()}
	}
	return nil
}
