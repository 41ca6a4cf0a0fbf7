package agui

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// RecordingSession is the protocol session a recording of scenario name at seed was made for.
func RecordingSession(name string, seed uint64) (*protocol.Session, error) {
	sc, ok := scenarios.Embedded().Get(name)
	if !ok {
		return nil, fmt.Errorf("unknown scenario %s", name)
	}
	id := "agui-" + name
	return &protocol.Session{
		ID:       id,
		Input:    scenarios.Directive{Scenario: name, Seed: seed, Session: id}.String() + " " + sc.Prompt,
		Expected: sc.Render(seed).Expected(),
	}, nil
}

// JudgeRecording replays a recorded stream through the checker and returns the rules broken and
// its end: "" for RUN_FINISHED, a RUN_ERROR's message, else "truncated".
func JudgeRecording(rec protocol.Recording) (rules []protocol.Rule, end string, err error) {
	s, err := RecordingSession(rec.Scenario, rec.Seed)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", rec.Path, err)
	}
	c := NewChecker(s, false)
	end = "truncated"
	dec := sse.NewDecoder(strings.NewReader(rec.Stream()))
	var ev sse.Event
	for {
		if err := dec.Next(&ev); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, "", fmt.Errorf("%s: %w", rec.Path, err)
		}
		if obs := c.Observe(&ev); obs.Kind == protocol.FrameTerminal {
			end = obs.Error
		}
	}
	var streamErr error
	if end == "truncated" {
		streamErr = protocol.ErrTruncated
	}
	set := map[protocol.Rule]bool{}
	for _, v := range c.Finish(streamErr) {
		set[v.Rule] = true
	}
	return slices.Sorted(maps.Keys(set)), end, nil
}
