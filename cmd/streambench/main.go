// Command streambench benchmarks agent streaming over Server-Sent Events: a scripted mock LLM
// provider, a reference agent runtime, a load generator with protocol checkers, and reports.
// Each subcommand lives in its own file as a func(args []string) error over a library call.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"github.com/streambench/streambench/cmd/internal/console"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(args []string) error
}

func commands() []command {
	return []command{
		{"run", "start the mock and the runtime, run the default load, write results (the main job)", runRun},
		{"mock", "serve the scripted mock LLM provider (OpenAI and Anthropic wire formats)", runMock},
		{"runtime", "serve the reference agent runtime (sim-chat, sim-canvas, compose)", runRuntime},
		{"load", "run a load against any runtime and check every protocol rule", runLoad},
		{"merge", "merge the shard directories of a sharded run (load --shard I/N) into one run", toStdout(mergeMain)},
		{"leaks", "one leak check around a sharded run: leaks baseline before the shards, leaks verify after", toStdout(leaksMain)},
		{"report", "re-render a run's report and plots from its saved results", toStdout(reportMain)},
		{"compare", "compare two runs metric by metric", toStdout(compareMain)},
		{"gate", "pass or fail a run against thresholds and a baseline (exit 99 on failure)", toStdout(gateMain)},
		{"sweep", "run a capacity sweep and find the knee", toStdout(sweepMain)},
		{"scenarios", "list, show and validate scenarios", toStdout(scenariosMain)},
		{"bench", "measure streambench's own costs (codec, pacing, relay, client)", runBench},
		{"version", "print the module version and git revision (also --version)", runVersion},
	}
}

// toStdout runs a command that writes to out (tests pass a buffer) with standard output.
func toStdout(cmd func(args []string, out io.Writer) error) func(args []string) error {
	return func(args []string) error { return cmd(args, os.Stdout) }
}

// exitError carries a process exit code through the error chain.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Exit codes shared by every subcommand. Bad input is never 2: Go exits 2 on a panic, and a
// crash of the instrument must never read as a typo in a flag.
const (
	exitOK        = 0
	exitFailure   = 1   // the command ran and found a problem (the run's verdict FAIL), or could not finish
	exitThreshold = 99  // gate: a check failed (as k6 does)
	exitUsage     = 104 // bad input: flags, files, a run directory that is not a finished run (as k6's invalid config)
)

// exitCodesHelp is the one table of exit codes.
const exitCodesHelp = `Exit codes:
  0    PASS, or the command did what it was asked
  1    the run's verdict is FAIL (load, run, merge, bench), or the command could not finish (the error says why)
  2    streambench crashed (a Go panic or fatal error): a bug in streambench, never a verdict; please report it
  99   gate: a check failed
  104  bad input: a flag, a file, a scenario or mix, a run directory that is not a finished run
`

// exitCode is a command's exit code: its exitError's, 104 for console.BadInput, else 1.
func exitCode(err error) int {
	var ee *exitError
	var bad *console.BadInput
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &bad):
		return exitUsage
	}
	return exitFailure
}

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	// A reader that goes away (`run | head`) must not kill a run before it wrote its results.
	signal.Ignore(syscall.SIGPIPE)
	cmds := commands()
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range cmds {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:])
		if err == nil || errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(os.Stderr, "streambench %s: %v\n", c.name, err)
		if errors.Is(err, errArgsChecked) {
			return exitOK
		}
		return exitCode(err)
	}
	fmt.Fprintf(os.Stderr, "streambench: unknown command %q\n\n", args[0])
	printUsage(cmds)
	return exitUsage
}

func printUsage(cmds []command) {
	var b strings.Builder
	b.WriteString("streambench benchmarks agent streaming over Server-Sent Events.\n\nUsage:\n  streambench <command> [flags]\n\nCommands:\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'streambench <command> --help' for a command's flags, 'streambench --version' for the build.\n\n")
	b.WriteString(exitCodesHelp)
	fmt.Fprint(os.Stderr, b.String())
}

// newFlagSet returns a pflag set whose --help prints the command's usage, its flags, then
// each of after after a blank line.
func newFlagSet(name, usage string, after ...string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: streambench %s\n\n", usage)
		fs.PrintDefaults()
		for _, text := range after {
			fmt.Fprint(os.Stderr, "\n"+text)
		}
	}
	return fs
}

// CheckArgsEnv=1 makes a command exit 0 as soon as its flags parse (deploy's test checks every
// manifest's args so).
const CheckArgsEnv = "STREAMBENCH_CHECK_ARGS"

// errArgsChecked ends a command whose flags parsed under CheckArgsEnv.
var errArgsChecked = errors.New("flags parse (" + CheckArgsEnv + "=1: not run)")

// parseFlags parses args and turns flag errors into usage errors.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return &exitError{code: exitUsage, err: err}
	}
	if os.Getenv(CheckArgsEnv) == "1" {
		return errArgsChecked
	}
	return nil
}

// parseFlagsNoArgs is parseFlags for a command that takes no arguments.
func parseFlagsNoArgs(fs *pflag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	return nil
}

// newLogger logs to stderr at level, or at verboseLevel when verbose.
func newLogger(verbose bool, level, verboseLevel slog.Level) *slog.Logger {
	if verbose {
		level = verboseLevel
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
