package main

import (
	"cmp"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
)

// runVersion prints what versionText says about this binary.
func runVersion(args []string) error {
	fs := newFlagSet("version", "version\n\nPrint the module version, the git revision the binary was built from and the Go toolchain.")
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprint(os.Stdout, versionText(bi, ok))
	return nil
}

// versionText describes a build: its module's path and version, git revision, Go and platform.
func versionText(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "streambench: no build information in this binary\n"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "streambench %s\n", cmp.Or(bi.Main.Version, "(devel)"))
	if bi.Main.Path != "" {
		fmt.Fprintf(&b, "module %s\n", bi.Main.Path)
	}
	if rev := settings["vcs.revision"]; rev != "" {
		line := "git revision " + rev
		var notes []string
		if t := settings["vcs.time"]; t != "" {
			notes = append(notes, t)
		}
		if settings["vcs.modified"] == "true" {
			notes = append(notes, "modified")
		}
		if len(notes) > 0 {
			line += " (" + strings.Join(notes, ", ") + ")"
		}
		fmt.Fprintln(&b, line)
	} else {
		fmt.Fprintln(&b, "git revision unknown (built without VCS stamping: go run, go test, -buildvcs=false or outside a git checkout; go build in the checkout stamps it)")
	}
	goos, goarch := settings["GOOS"], settings["GOARCH"]
	platform := ""
	if goos != "" && goarch != "" {
		platform = " " + goos + "/" + goarch
	}
	fmt.Fprintf(&b, "go %s%s\n", bi.GoVersion, platform)
	return b.String()
}
