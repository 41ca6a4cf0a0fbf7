package loadgen

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/measure"
)

// TestProcessLoads: CPU used is the difference of two readings over the wall time; sources
// that are one process (the same start time) count once, under a joined name; a source read
// only once is left out.
func TestProcessLoads(t *testing.T) {
	t.Parallel()
	sources := []cpuSource{{name: "generator"}, {name: "mock", url: "m"}, {name: "runtime", url: "r"}}
	for _, tc := range []struct {
		name          string
		before, after cpuReading
		want          string
	}{
		// three processes: 4 s of CPU over 10 s is 0.4 cores
		{"children", cpuReading{cpu: map[string]float64{"generator": 1, "mock": 2, "runtime": 3}, start: map[string]float64{"generator": 1, "mock": 2, "runtime": 3}},
			cpuReading{cpu: map[string]float64{"generator": 5, "mock": 4, "runtime": 13}, start: map[string]float64{"generator": 1, "mock": 2, "runtime": 3}},
			"generator 0.40, mock 0.20, runtime 1.00"},
		// in process: the mock and the runtime report the generator's own process
		{"in process", cpuReading{cpu: map[string]float64{"generator": 1, "mock": 1, "runtime": 1}, start: map[string]float64{"generator": 7, "mock": 7, "runtime": 7}},
			cpuReading{cpu: map[string]float64{"generator": 16, "mock": 16, "runtime": 16}, start: map[string]float64{"generator": 7, "mock": 7, "runtime": 7}},
			"generator+mock+runtime 1.50"},
		// a runtime without process metrics is not judged
		{"unread", cpuReading{cpu: map[string]float64{"generator": 1, "mock": 2}}, cpuReading{cpu: map[string]float64{"generator": 3, "mock": 3}},
			"generator 0.20, mock 0.10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, l := range processLoads(sources, tc.before, tc.after, 10*time.Second) {
				got = append(got, fmt.Sprintf("%s %.2f", l.Name, l.Cores))
			}
			if strings.Join(got, ", ") != tc.want {
				t.Errorf("loads %q, want %q", strings.Join(got, ", "), tc.want)
			}
		})
	}
}

// TestSaturation: which process is named saturated, and when none is.
func TestSaturation(t *testing.T) {
	t.Parallel()
	calm := hdrhistogram.New(1, 3_600_000_000, 3)
	late := hdrhistogram.New(1, 3_600_000_000, 3)
	for range 100 {
		_ = calm.RecordValue(500)     // 0.5 ms
		_ = late.RecordValue(100_000) // 100 ms
	}
	loads := func(gen, mock, rt float64) []measure.ProcessLoad {
		return []measure.ProcessLoad{{Name: "generator", Cores: gen}, {Name: "mock", Cores: mock}, {Name: "runtime", Cores: rt}}
	}
	for _, tc := range []struct {
		name  string
		loads []measure.ProcessLoad
		lag   *hdrhistogram.Histogram
		want  []string // the saturated processes; none: no warning
	}{
		// 1.0 of 2 cores busy and no lag: nothing saturated
		{"idle", loads(0.3, 0.2, 0.5), calm, nil},
		// 1.9 of 2 cores busy: the machine is saturated, the runtime used most
		{"machine", loads(0.4, 0.5, 1.0), calm, []string{"runtime"}},
		// one process alone on nearly every core
		{"one process", loads(0.1, 1.85, 0.1), calm, []string{"mock"}},
		// the generator's lag marks it even on a machine with cores to spare, without a
		// warning of its own (the overload warning says it)
		{"generator lag", loads(0.3, 0.2, 0.5), late, []string{"generator"}},
		// a saturated machine and a late generator: both named
		{"machine and lag", loads(0.4, 0.5, 1.0), late, []string{"generator", "runtime"}},
		// in process: one figure, named whole
		{"in process", []measure.ProcessLoad{{Name: "generator+mock+runtime", Cores: 1.95}}, calm, []string{"generator+mock+runtime"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := saturation(tc.loads, 2, tc.lag)
			var got []string
			for _, l := range tc.loads {
				if l.Saturated {
					got = append(got, l.Name)
				}
			}
			lagOnly := tc.name == "generator lag"
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || (w == "") != (len(tc.want) == 0 || lagOnly) {
				t.Errorf("saturated %q, warning %q; want %q", got, w, tc.want)
			}
			if len(tc.want) > 0 && !lagOnly && !strings.HasPrefix(w, "saturated: "+strings.Join(tc.want, ", ")+" (cores used: ") {
				t.Errorf("warning %q does not open by naming %q and the cores used", w, tc.want)
			}
		})
	}
}
