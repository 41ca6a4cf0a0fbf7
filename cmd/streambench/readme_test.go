package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeExitCodes: the README's exit-code table says exactly what streambench --help says
// (exitCodesHelp), row by row.
func TestReadmeExitCodes(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "### Exit codes\n")
	if !ok {
		t.Fatal("README.md has no \"### Exit codes\" section")
	}
	row := regexp.MustCompile(`^\| (\d+) \| (.+) \|$`)
	var readme []string
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		if m := row.FindStringSubmatch(line); m != nil {
			readme = append(readme, m[1]+" "+m[2])
		}
	}
	help := regexp.MustCompile(`^\s+(\d+)\s+(.+)$`)
	var want []string
	for _, line := range strings.Split(exitCodesHelp, "\n") {
		if m := help.FindStringSubmatch(line); m != nil {
			want = append(want, m[1]+" "+m[2])
		}
	}
	if len(want) == 0 {
		t.Fatal("no rows parsed from exitCodesHelp")
	}
	if strings.Join(readme, "\n") != strings.Join(want, "\n") {
		t.Errorf("README.md's exit codes differ from streambench --help's:\nREADME:\n%s\n--help:\n%s",
			strings.Join(readme, "\n"), strings.Join(want, "\n"))
	}
}
