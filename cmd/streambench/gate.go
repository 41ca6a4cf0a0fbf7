package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/verdict"
)

// gateMain passes or fails a run against thresholds and a baseline: exit 0 when every check
// passes, 99 when one fails, 104 for bad input (an incomplete run among it).
func gateMain(args []string, out io.Writer) error {
	fs := newFlagSet("gate", "gate --current DIR [--baseline DIR] [--threshold CHECK]... [--max-regression NAME.STAT=N%]... [--allow RULE]... [--junit FILE] [--markdown]\n\n"+
		"Exit 0 when every check passes, 99 when one fails, 104 for bad input, which includes an incomplete\n"+
		"run: one killed before it finished, whose summary.json still says \"incomplete\": true (the\n"+
		"snapshot written as it went); its figures stop at the kill, so the gate judges none of them.\n\n"+
		"The gate judges exactly as load and run judged the run (one judge, package verdict), adding the\n"+
		"checks given here. The defaults always apply: "+strings.Join(verdict.DefaultChecks(), ", ")+",\n"+
		"and the run's integrity (a session started, every session ended with an outcome, every latency\n"+
		"recorded, not interrupted, post-run checks passed). The run's mix thresholds are added too.\n"+
		"Relax a default only by naming its measure: 'errors<0.1%', 'outcome.over_time<1%' (that outcome\n"+
		"out of errors), 'violations{rule=R-abort}<5' (that rule out of violations), 'failed<1%'.\n"+
		"--allow RULE (and the mix's allow:) declares a known finding: its violations are left out of\n"+
		"violations and failed and shown with the verdict \"allowed\", never dropped; they do not fail the\n"+
		"gate (load and run take --allow too, and the mix's allow:, so they do not fail the run either).", verdict.MetricsHelp())
	current := fs.String("current", "", "the run directory to judge (or give it as the argument)")
	baseline := fs.String("baseline", "", "a reference run directory for --max-regression (e.g. results/baseline); one of another workload (dialects, clients, mix, ...) is compared on the keys both recorded, with a warning")
	thresholds := fs.StringArray("threshold", nil, "an absolute check such as 'ttfc.p99<300ms' or 'errors<0.1%' (repeatable)")
	regressions := fs.StringArray("max-regression", nil, "how much worse than --baseline a latency may get: 'ttfc.p99=10%' or 'ttfc.p99=50ms' (repeatable)")
	junit := fs.String("junit", "", "also write the checks as JUnit XML to this file")
	markdown := fs.Bool("markdown", false, "print the checks as a Markdown table (for CI job summaries)")
	allow := fs.StringArray("allow", nil, "a rule whose violations are a known finding, e.g. R-abort: shown as allowed, not failing the gate (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *current == "" && fs.NArg() == 1:
		*current = fs.Arg(0)
	case fs.NArg() > 0:
		return usageError("unexpected arguments %q", fs.Args())
	case *current == "":
		return usageError("missing --current DIR: the run to judge")
	}
	cfg, err := verdict.ParseFlags(dialects.Default().Rules(), *thresholds, *regressions, *allow)
	if err != nil {
		return usageError("%v", err)
	}
	if len(cfg.Regressions) > 0 && *baseline == "" {
		return usageError("--max-regression needs --baseline DIR")
	}
	run, err := readRunArg(*current)
	if err != nil {
		return err
	}
	if *baseline != "" {
		if cfg.Baseline, err = readRunArg(*baseline); err != nil {
			return err
		}
	}
	res, err := verdict.Judge(run, cfg)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if *markdown {
		report.WriteGateMarkdown(out, res)
	} else if err := report.WriteGateTable(out, res); err != nil {
		return err
	}
	var junitErr error
	if *junit != "" {
		var buf bytes.Buffer
		junitErr = report.WriteGateJUnit(&buf, res)
		if junitErr == nil {
			junitErr = os.WriteFile(*junit, buf.Bytes(), 0o644)
		}
		if junitErr != nil {
			junitErr = fmt.Errorf("--junit: %w", junitErr)
		}
	}
	// A JUnit file that could not be written is reported beside a failed check, not in its place.
	if failed := res.Failed(); len(failed) > 0 {
		err := fmt.Errorf("%d of %d checks failed: %s", len(failed), len(res.Checks), strings.Join(failed, ", "))
		if junitErr != nil {
			err = fmt.Errorf("%w; and %w", err, junitErr)
		}
		return &exitError{code: exitThreshold, err: err}
	}
	if junitErr != nil {
		return &exitError{code: exitUsage, err: junitErr}
	}
	return nil
}
