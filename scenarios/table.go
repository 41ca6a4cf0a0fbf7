package scenarios

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes one aligned row per scenario of the library: its name, turns, tool calls,
// faults, client actions and description ("-" for an empty cell).
func (l *Library) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTURNS\tTOOLS\tFAULTS\tCLIENT\tDESCRIPTION")
	for _, name := range l.Names() {
		s, _ := l.Get(name)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", s.Name, len(s.Turns), s.ToolCallCount(), cmp.Or(s.Faults.String(), "-"), cmp.Or(s.Client.String(), "-"), s.Description)
	}
	return tw.Flush()
}

// ValidateFiles loads each file and writes "ok" with its scenario's name, or FAIL and its
// errors a line each; it returns how many were invalid.
func ValidateFiles(w io.Writer, paths []string) (invalid int) {
	for _, path := range paths {
		s, err := LoadFile(path)
		if err != nil {
			invalid++
			fmt.Fprintf(w, "FAIL %s\n", path)
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(w, "  %s\n", line)
			}
			continue
		}
		fmt.Fprintf(w, "ok   %s (%s)\n", path, s.Name)
	}
	return invalid
}
