package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// Conversation is one conversation of a conversation file (load --conversations): the user's
// turns, replayed one by one by one client, each request carrying the whole history with the
// answers the target really gave (never the file's).
type Conversation struct {
	// System is the system message sent first in every request ("": none).
	System string
	// Turns are the user's messages, in order (at least one).
	Turns []string
	// ReplyTokens is, per turn, the length of the reply the file recorded (a ShareGPT gpt
	// turn, by the scenario tokenizer; 0: none): max_tokens without --output-tokens.
	ReplyTokens []int
}

// conversationShape says what a conversation file's line must be, for errors.
const conversationShape = `want {"turns":["first user message","second",…]} or a ShareGPT {"conversations":[{"from":"human","value":"…"},{"from":"gpt","value":"…"},…]} with at least one human turn`

// LoadConversations reads at most MaxPrompts conversations: JSON Lines of {"turns":[…]} or
// ShareGPT records (the human turns sent, the system turn kept), or one JSON array of them.
func LoadConversations(path string) ([]Conversation, error) {
	var out []Conversation
	err := eachRecord(path, "conversation", " (a line holds at most 16 MiB)", func(where string, raw []byte) (bool, error) {
		c, err := parseConversation(raw)
		if err != nil {
			return false, fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, c)
		return len(out) < MaxPrompts, nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no conversation (%s, one a line)", path, conversationShape)
	}
	return out, nil
}

// parseConversation reads one record.
func parseConversation(raw []byte) (Conversation, error) {
	var rec struct {
		Turns         []json.RawMessage `json:"turns"`
		Conversations []struct {
			From  string `json:"from"`
			Value string `json:"value"`
		} `json:"conversations"`
	}
	if !json.Valid(raw) {
		return Conversation{}, fmt.Errorf("not a JSON value: %s", conversationShape)
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Conversation{}, fmt.Errorf("%s (%v)", conversationShape, err)
	}
	var c Conversation
	switch {
	case len(rec.Turns) > 0:
		for i, t := range rec.Turns {
			var s string
			if err := json.Unmarshal(t, &s); err != nil || strings.TrimSpace(s) == "" {
				return c, fmt.Errorf("turns[%d] is %s: want a non-empty string, the user's message", i, protocol.Quote(string(t), 40))
			}
			c.Turns = append(c.Turns, s)
		}
		c.ReplyTokens = make([]int, len(c.Turns))
	case len(rec.Conversations) > 0:
		var tc scenarios.TokenCounter
		for i, t := range rec.Conversations {
			switch t.From {
			case "system":
				c.System = t.Value
			case "human", "user":
				c.Turns = append(c.Turns, t.Value)
				c.ReplyTokens = append(c.ReplyTokens, 0)
			case "gpt", "assistant", "chatgpt", "bard", "model":
				if n := len(c.ReplyTokens); n > 0 && c.ReplyTokens[n-1] == 0 {
					c.ReplyTokens[n-1] = tc.Text(t.Value)
				}
			default:
				return c, fmt.Errorf("conversations[%d].from %q: want human (sent), gpt (not sent: the target's own answer is) or system", i, t.From)
			}
		}
		if len(c.Turns) == 0 {
			return c, errors.New("a ShareGPT record without a human turn: " + conversationShape)
		}
	default:
		return c, errors.New(conversationShape)
	}
	return c, nil
}

// turnMaxTokens is max_tokens of turn (from 1) of conversation c in session seed: drawn from
// Output with a source of the turn's own, else the file's reply length.
func (e *Workload) TurnMaxTokens(c *Conversation, seed uint64, turn int) int {
	if e.Output.Kind != "" {
		return e.Output.Sample(rand.New(rand.NewPCG(seed, 0x7475726e+uint64(turn)))) // "turn"
	}
	return c.ReplyTokens[turn]
}
