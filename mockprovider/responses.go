package mockprovider

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/streambench/streambench/protocol/openairesponses"
	"github.com/streambench/streambench/scenarios"
)

var _ streamWriter = (*openairesponses.StreamWriter)(nil)

const responsesIDPrefix = "resp_sb"

// responsesWire adapts the Responses wire, statelessly: see responseID.
func responsesWire() *wire {
	return &wire{
		name:     openairesponses.Name,
		idPrefix: responsesIDPrefix,
		parse: func(body []byte) (wireRequest, error) {
			r, err := openairesponses.ParseRequest(body)
			if err != nil {
				return wireRequest{}, err
			}
			req := wireRequest{Model: r.Model, Stream: r.Stream, IncludeUsage: true,
				LastUserText: r.LastUserText, AssistantTurns: r.ModelTurns, MaxTokens: r.MaxTokens}
			if r.PreviousResponseID != "" {
				dir, turn, err := parseResponseID(r.PreviousResponseID)
				if err != nil {
					return wireRequest{}, fmt.Errorf("previous_response_id: %w", err)
				}
				// The previous response's turns come first; its directive stands unless this
				// input's names another.
				req.AssistantTurns += turn + 1
				req.LastUserText = strings.TrimSpace(req.LastUserText + " " + dir.String())
			}
			return req, nil
		},
		newStream: func(w http.ResponseWriter, m streamMeta, _ bool) streamWriter {
			return openairesponses.NewStreamWriter(w, m)
		},
		writeResponse: openairesponses.WriteResponse,
		writeError:    openairesponses.WriteError,
		errTypes:      openaiErrTypes,
		responseID:    responseID,
	}
}

// responseID is resp_sb<seq>_<base64url of "<turn> <directive>">: sent back as
// previous_response_id, it continues the conversation on any mock with the same library.
func responseID(seq uint64, dir scenarios.Directive, turn int) string {
	state := strconv.Itoa(turn) + " " + dir.String()
	return responsesIDPrefix + strconv.FormatUint(seq, 10) + "_" + base64.RawURLEncoding.EncodeToString([]byte(state))
}

func parseResponseID(id string) (scenarios.Directive, int, error) {
	rest, ok := strings.CutPrefix(id, responsesIDPrefix)
	_, encoded, found := strings.Cut(rest, "_")
	if !ok || !found || len(id) > 4*MaxSelectorBytes {
		return scenarios.Directive{}, 0, fmt.Errorf("%q is not a response of this mock (resp_sb<n>_<state>)", clipSelector(id))
	}
	state, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return scenarios.Directive{}, 0, fmt.Errorf("%q: its state is not base64url: %w", clipSelector(id), err)
	}
	turnText, directive, _ := strings.Cut(string(state), " ")
	turn, err := strconv.Atoi(turnText)
	if err != nil || turn < 0 {
		return scenarios.Directive{}, 0, fmt.Errorf("%q: no turn in its state", clipSelector(id))
	}
	dir, found, err := scenarios.ParseDirective(directive)
	if err != nil || !found {
		return scenarios.Directive{}, 0, fmt.Errorf("%q: no directive in its state", clipSelector(id))
	}
	return dir, turn, nil
}
