package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol/dialects"
)

// TestVersionText: a stamped build names its module version, revision, time and modified
// tree; an unstamped one says why the revision is unknown; --version and version both exit 0.
func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/streambench/streambench", Version: "v0.0.0-20261202140827-ab03fc361bc6+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ab03fc361bc61975ea45bfe9b73652e4b830139d"}, {Key: "vcs.time", Value: "2026-12-02T14:08:27Z"},
			{Key: "vcs.modified", Value: "true"}, {Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}}}
	got := versionText(bi, true)
	for _, want := range []string{"streambench v0.0.0-20261202140827-ab03fc361bc6+dirty\n", "module github.com/streambench/streambench\n",
		"git revision ab03fc361bc61975ea45bfe9b73652e4b830139d (2026-12-02T14:08:27Z, modified)\n", "go go1.26.8 linux/amd64\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("versionText lacks %q:\n%s", want, got)
		}
	}
	got = versionText(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/streambench/streambench", Version: "(devel)"}}, true)
	if !strings.Contains(got, "streambench (devel)\n") || !strings.Contains(got, "git revision unknown (built without VCS stamping") {
		t.Errorf("unstamped build:\n%s", got)
	}
	if got := versionText(nil, false); !strings.Contains(got, "no build information") {
		t.Errorf("no build info: %q", got)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		if code := run(args); code != exitOK {
			t.Errorf("streambench %s: exit %d, want 0", args[0], code)
		}
	}
	if code := run([]string{"version", "extra"}); code != exitUsage {
		t.Errorf("streambench version extra: exit %d, want %d", code, exitUsage)
	}
}

// TestLoadUsageListsEveryDialect: load's usage line names every dialect of the registry.
func TestLoadUsageListsEveryDialect(t *testing.T) {
	u := loadUsage()
	for _, name := range dialects.Default().Names() {
		if !strings.Contains(u, name) {
			t.Errorf("load's usage line lacks dialect %q: %s", name, u)
		}
	}
}
