package agui

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/sse"
)

// JudgeRecording replays a recorded stream through the checker and returns the rules broken and
// its end: "" for RUN_FINISHED, a RUN_ERROR's message, else "truncated".
func JudgeRecording(rec protocol.Recording) (rules []protocol.Rule, end string, err error) {
	s, err := rec.Session("")
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
