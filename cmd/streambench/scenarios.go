package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/streambench/streambench/scenarios"
)

// scenariosUsage lists the scenarios subcommands.
const scenariosUsage = `scenarios <list|show|validate> [flags]

  list [--scenarios DIR]                     list the scenarios (embedded, or DIR's)
  show NAME [--seed N] [--json] [--scenarios DIR]
                                             print a scenario's YAML and what it renders to
  validate FILE...                           check scenario files (exit 104 if any is invalid)`

// scenariosMain lists, shows and validates scenarios.
func scenariosMain(args []string, out io.Writer) error {
	if len(args) == 0 {
		return usageError("missing subcommand; usage: streambench %s", scenariosUsage)
	}
	switch args[0] {
	case "list":
		return scenariosList(args[1:], out)
	case "show":
		return scenariosShow(args[1:], out)
	case "validate":
		return scenariosValidate(args[1:], out)
	case "-h", "--help", "help":
		fmt.Fprintf(os.Stderr, "Usage: streambench %s\n", scenariosUsage)
		return nil
	}
	return usageError("unknown subcommand %q; usage: streambench %s", args[0], scenariosUsage)
}

// loadLibrary returns DIR's scenarios, or the embedded library when dir is empty.
func loadLibrary(dir string) (*scenarios.Library, error) {
	lib, err := scenarios.Open(dir)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return lib, nil
}

// scenariosList prints one aligned row per scenario.
func scenariosList(args []string, out io.Writer) error {
	fs := newFlagSet("scenarios list", "scenarios list [--scenarios DIR]")
	dir := fs.String("scenarios", "", "directory of *.yaml scenarios (default: the embedded library)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("list takes no arguments, got %q", fs.Args())
	}
	lib, err := loadLibrary(*dir)
	if err != nil {
		return err
	}
	return lib.WriteTable(out)
}

// scenariosShow prints a scenario's YAML and its rendered ground truth.
func scenariosShow(args []string, out io.Writer) error {
	fs := newFlagSet("scenarios show", "scenarios show NAME [--seed N] [--json] [--scenarios DIR]")
	dir := fs.String("scenarios", "", "directory of *.yaml scenarios (default: the embedded library)")
	seed := fs.Uint64("seed", 1, "seed to render the scenario with")
	asJSON := fs.Bool("json", false, "print the scenario and its expected result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("show takes exactly one scenario name, got %d arguments", fs.NArg())
	}
	lib, err := loadLibrary(*dir)
	if err != nil {
		return err
	}
	name := fs.Arg(0)
	s, ok := lib.Get(name)
	if !ok {
		return usageError("unknown scenario %q; known: %s", name, strings.Join(lib.Names(), ", "))
	}
	if *asJSON {
		return s.WriteJSON(out, *seed)
	}
	fmt.Fprintf(out, "# %s (from %s)\n", name, lib.File(name))
	out.Write(lib.Source(name))
	return s.WriteOutline(out, *seed)
}

// scenariosValidate checks each file and reports ok or its errors; an invalid one is bad input.
func scenariosValidate(args []string, out io.Writer) error {
	fs := newFlagSet("scenarios validate", "scenarios validate FILE...")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError("validate needs at least one FILE")
	}
	invalid := scenarios.ValidateFiles(out, fs.Args())
	if invalid > 0 {
		return usageError("%d of %d scenario files are invalid", invalid, fs.NArg())
	}
	return nil
}
