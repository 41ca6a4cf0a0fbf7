package loadgen

import (
	"fmt"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/measure"
)

// A saturated generator's queueing for a CPU would be blamed on the target: it measures its own lag.

const (
	lagInterval = 10 * time.Millisecond // the probe's period
	// OverloadLag is the generator_lag p99 above which the verdict warns of an overloaded
	// generator.
	OverloadLag = 20 * time.Millisecond
	// OverloadLateShare is the share of late open-loop starts above which the verdict warns
	// that the generator could not keep up.
	OverloadLateShare = 0.01
)

// generatorLagKey is the histogram key of the generator's own scheduling lag.
var generatorLagKey = measure.Key{Metric: measure.GeneratorLag, Dialect: "generator"}

// lagProbe records how late a lagInterval sleep wakes; its histogram is read after stop.
type lagProbe struct {
	hist *hdrhistogram.Histogram
	quit chan struct{}
	done chan struct{}
}

func startLagProbe(interval time.Duration) *lagProbe {
	p := &lagProbe{hist: measure.NewHistogram(), quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTimer(interval)
		defer t.Stop()
		due := time.Now().Add(interval)
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				// The timer's delay plus the wait for a P: both the generator's own.
				lag := max(time.Since(due), 0)
				_ = p.hist.RecordValue(lag.Microseconds()) // over an hour late: not worth an error
				due = time.Now().Add(interval)
				t.Reset(interval)
			}
		}
	}()
	return p
}

// stop ends the probe and returns its histogram (µs).
func (p *lagProbe) stop() *hdrhistogram.Histogram {
	close(p.quit)
	<-p.done
	return p.hist
}

// overloadWarning says when the generator could not keep up ("" when it did).
func overloadWarning(lag *hdrhistogram.Histogram, c measure.Counters) string {
	var why []string
	if lag != nil && lag.TotalCount() > 0 {
		if p99 := time.Duration(lag.ValueAtQuantile(99)) * time.Microsecond; p99 > OverloadLag {
			why = append(why, fmt.Sprintf("its scheduling lag p99 was %v (bound %v, max %v)",
				p99.Round(time.Millisecond/10), OverloadLag, (time.Duration(lag.Max())*time.Microsecond).Round(time.Millisecond/10)))
		}
	}
	if c.SessionsStarted > 0 {
		if share := float64(c.LateStarts) / float64(c.SessionsStarted); share > OverloadLateShare {
			why = append(why, fmt.Sprintf("%d of %d sessions (%.1f%%) started late (bound %.0f%%)",
				c.LateStarts, c.SessionsStarted, share*100, OverloadLateShare*100))
		}
	}
	if len(why) == 0 {
		return ""
	}
	return "the generator was overloaded: " + strings.Join(why, "; ") + "; latencies include the generator's own delay, so they overstate the target's (use fewer streams, more cores, or another machine)"
}
