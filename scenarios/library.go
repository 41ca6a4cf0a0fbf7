package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
)

//go:embed library/*.yaml
var embeddedFS embed.FS

// Library is a set of scenarios by name, immutable and safe for concurrent use (so are the
// Scenarios it returns: do not modify them).
type Library struct {
	byName map[string]*Scenario
	files  map[string]string
	source map[string][]byte
	names  []string
}

var embedded = sync.OnceValues(func() (*Library, error) { return loadFS(embeddedFS, "library", "library") })

// Embedded returns the library compiled into the binary; it panics on invalid files.
func Embedded() *Library {
	lib, err := embedded()
	if err != nil {
		panic(fmt.Sprintf("scenarios: embedded library is invalid: %v", err))
	}
	return lib
}

// LoadDir loads every *.yaml and *.yml file in dir (not recursively).
func LoadDir(dir string) (*Library, error) {
	lib, err := loadFS(os.DirFS(dir), ".", dir)
	if err != nil {
		return nil, fmt.Errorf("loading scenarios from %s: %w", dir, err)
	}
	return lib, nil
}

// loadFS loads the scenario files of one directory of fsys, naming files under display in errors.
func loadFS(fsys fs.FS, dir, display string) (*Library, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	lib := &Library{byName: map[string]*Scenario{}, files: map[string]string{}, source: map[string][]byte{}}
	var errs []error
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if _, err := lib.add(filepath.Join(display, e.Name()), e.Name(), data, err, "expected unique names"); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(lib.names) == 0 {
		return nil, fmt.Errorf("no *.yaml or *.yml scenario files")
	}
	slices.Sort(lib.names)
	return lib, nil
}

// add parses data (read with readErr) as the file display names and adds its scenario, known by
// file; a name l has is an error ending in expected (%[2]s: the name).
func (l *Library) add(display, file string, data []byte, readErr error, expected string) (*Scenario, error) {
	if readErr != nil {
		return nil, readErr
	}
	s, err := Parse(display, data)
	if err != nil {
		return nil, err
	}
	if prev, dup := l.files[s.Name]; dup {
		return nil, fmt.Errorf("%s: scenario %q is already defined in %s; "+expected, file, s.Name, prev)
	}
	l.byName[s.Name], l.files[s.Name], l.source[s.Name] = s, file, data
	l.names = append(l.names, s.Name)
	return s, nil
}

func (l *Library) clone() *Library {
	return &Library{byName: maps.Clone(l.byName), files: maps.Clone(l.files), source: maps.Clone(l.source),
		names: slices.Clone(l.names)}
}

// Get returns the scenario called name.
func (l *Library) Get(name string) (*Scenario, bool) {
	s, ok := l.byName[name]
	return s, ok
}

// Names returns the scenario names, sorted. The caller may modify the returned slice.
func (l *Library) Names() []string { return slices.Clone(l.names) }

// File returns the file name the scenario was loaded from ("" if unknown).
func (l *Library) File(name string) string { return l.files[name] }

// Len is the number of scenarios.
func (l *Library) Len() int { return len(l.names) }

// Source returns the YAML the scenario was loaded from (nil if unknown), not to be modified.
func (l *Library) Source(name string) []byte { return l.source[name] }

// WithFiles returns a copy of l with the scenarios of the files at paths added, and their names
// in order. A name l has, or that two files share, is an error: a mock given the same files
// must resolve each name to one script.
func (l *Library) WithFiles(paths []string) (*Library, []string, error) {
	n := l.clone()
	var names []string
	var errs []error
	for _, p := range paths {
		data, err := os.ReadFile(p)
		s, err := n.add(p, p, data, err, "expected a name of its own (rename it, e.g. name: my-%[2]s)")
		if err != nil {
			errs = append(errs, err)
		} else {
			names = append(names, s.Name)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	slices.Sort(n.names)
	return n, names, nil
}
