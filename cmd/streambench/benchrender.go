package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/streambench/streambench/internal/selfbench"
)

// benchRenderCommand is `bench render`: figures files to Markdown, nothing measured.
const benchRenderCommand = "render"

// benchRender writes each figures file (`bench --json`) as Markdown to stdout or into --out.
func benchRender(args []string, stdout io.Writer) error {
	fs := newFlagSet("bench "+benchRenderCommand, "bench "+benchRenderCommand+" FILE [FILE...] [--out DOC.md]")
	out := fs.String("out", "", "replace the lines between the markers in this Markdown file (docs/BENCHMARKS.md) instead of writing to standard output; the rest of the file is kept")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError("render: name at least one figures file (written by `streambench bench all --json FILE`)")
	}
	var parts []string
	for _, name := range fs.Args() {
		data, err := os.ReadFile(name)
		if err != nil {
			return usageError("render: %v", err)
		}
		md, err := selfbench.RenderMarkdown(name, data)
		if err != nil {
			return usageError("render: %v", err)
		}
		parts = append(parts, md)
	}
	generated := strings.Join(parts, "\n")
	if *out == "" {
		_, err := io.WriteString(stdout, generated)
		return err
	}
	doc, err := os.ReadFile(*out)
	if err != nil {
		return usageError("render: --out: %v", err)
	}
	updated, err := selfbench.ReplaceGenerated(*out, string(doc), generated)
	if err != nil {
		return usageError("render: --out: %v", err)
	}
	if err := os.WriteFile(*out, []byte(updated), 0o644); err != nil {
		return fmt.Errorf("render: --out: %w", err)
	}
	return nil
}
