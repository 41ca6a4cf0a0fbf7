// Package endpoint is an inference endpoint's workload: what each session of an endpoint load
// sends (synthetic prompts, prompt files, conversations, a trace's rows), drawn from its seed.
package endpoint

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/streambench/streambench/modeltokens"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// Workload is an inference endpoint's workload (load --input-tokens, --output-tokens,
// --prompts): each session is one request as an application sends it (protocol.EndpointRequest:
// no directive, no tools, no reasoning fields), judged for structure only.
type Workload struct {
	// Input is the synthetic prompt's length in tokens of Tokenizer (after the prefix); used
	// when Prompts is empty.
	Input TokenDist
	// Tokenizer is the tiktoken encoding (modeltokens) in which synthetic prompts and trace
	// rows have exactly their lengths ("": modeltokens.CL100K).
	Tokenizer string
	// PrefixTokens, when positive, begins every synthetic prompt with a prefix of that many
	// tokens, one of PrefixPool (0: one) drawn by the session's seed, for a prefix cache to reuse.
	PrefixTokens, PrefixPool int
	// Trace, when not empty, gives session i row i's lengths and prefix blocks (cycling)
	// instead of synthetic prompts (load --trace).
	Trace []TraceRow
	// Output is max_tokens; zero (Kind "") sends none, or a prompt's own reply length when the
	// prompt file has one.
	Output TokenDist
	// Prompts, when not empty, are sampled with the session's seed instead of synthetic ones.
	Prompts []Prompt
	// Conversations, when not empty, are sampled with the session's seed instead of prompts:
	// each session replays one turn by turn (load --conversations; Conversation).
	Conversations []Conversation
	// Source names where the prompts or conversations came from (the file), for the results.
	Source string
	// MaxTokensField is the openai-chat field of max_tokens ("": max_tokens); MinTokens
	// (min_tokens = max_tokens) and IgnoreEOS are vLLM's way to generate exactly that length.
	MaxTokensField       string
	MinTokens, IgnoreEOS bool
}

// Prompt is one prompt of a prompt file: the conversation sent, and the length of the answer
// the file recorded (ShareGPT's reply; 0 when none).
type Prompt struct {
	Messages    []protocol.Message
	ReplyTokens int
}

// Request is the endpoint request of session index, drawn from its seed, and for a
// conversation workload the conversation it begins (nil otherwise).
func (e *Workload) Request(index, seed uint64) (*protocol.EndpointRequest, *Conversation) {
	r := rand.New(rand.NewPCG(seed, 0x656e64706f696e74)) // "endpoint"
	req := &protocol.EndpointRequest{}
	reply := 0
	var conv *Conversation
	if len(e.Conversations) > 0 {
		conv = &e.Conversations[r.IntN(len(e.Conversations))]
		if conv.System != "" {
			req.Messages = append(req.Messages, protocol.Message{Role: "system", Text: conv.System})
		}
		req.Messages = append(req.Messages, protocol.Message{Role: "user", Text: conv.Turns[0]})
		req.Conversation, reply = true, conv.ReplyTokens[0]
	} else if len(e.Prompts) > 0 {
		p := &e.Prompts[r.IntN(len(e.Prompts))]
		req.Messages, reply = p.Messages, p.ReplyTokens
	} else if len(e.Trace) > 0 {
		row := &e.Trace[index%uint64(len(e.Trace))]
		req.Messages, reply = e.userText(r.Uint64(), row.Input, TraceBlockTokens, row.Blocks), row.Output
	} else {
		n, prefix := e.Input.Sample(r), []uint64(nil)
		if e.PrefixTokens > 0 {
			prefix = []uint64{uint64(r.IntN(max(e.PrefixPool, 1)))}
		}
		req.Messages = e.userText(r.Uint64(), e.PrefixTokens*len(prefix)+n, e.PrefixTokens, prefix)
	}
	if e.Output.Kind != "" {
		req.MaxTokens = e.Output.Sample(r)
	} else {
		req.MaxTokens = reply
	}
	req.MaxTokensField, req.IgnoreEOS = e.MaxTokensField, e.IgnoreEOS
	if e.MinTokens {
		req.MinTokens = req.MaxTokens
	}
	return req, conv
}

// userText is a user message of exactly total tokens of the tokenizer, its one-token words
// (modeltokens.Words): blocks first, each blockTokens words drawn from its id alone (the same
// block, the same text in every session), then words drawn from seed.
func (e *Workload) userText(seed uint64, total, blockTokens int, blocks []uint64) []protocol.Message {
	words, _ := modeltokens.Words(cmp.Or(e.Tokenizer, modeltokens.CL100K)) // Check loaded them
	var b strings.Builder
	b.Grow(total * 7) // a word is 5 bytes on average, and a space: no copy as the text grows
	add := func(r *rand.Rand, n int) {
		for range n {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
	}
	for _, id := range blocks {
		n := min(blockTokens, total)
		add(rand.New(rand.NewPCG(id, 0x626c6f636b)), n) // "block"
		total -= n
	}
	add(rand.New(rand.NewPCG(seed, 0x70726f6d7074)), total) // "prompt"
	return []protocol.Message{{Role: "user", Text: b.String()}}
}

// Check loads the tokenizer's words synthetic prompts and trace rows are made of, before the
// run rather than in its first session: an encoding modeltokens does not know is an error.
func (e *Workload) Check() error {
	if len(e.Prompts) > 0 || len(e.Conversations) > 0 {
		return nil
	}
	_, err := modeltokens.Words(cmp.Or(e.Tokenizer, modeltokens.CL100K))
	return err
}

// TokenDist is a distribution of token counts: fixed ("512"), normal ("512±64" or "512+-64":
// mean 512, standard deviation 64, at least 1) or uniform ("uniform:256-768", both included).
type TokenDist struct {
	Kind     string // "fixed", "normal", "uniform"; "": not given
	Mean     int    // fixed: the count; normal: the mean
	Stddev   int    // normal
	Min, Max int    // uniform
	spec     string
}

// ParseTokenDist reads a TokenDist; "" is the zero TokenDist (not given).
func ParseTokenDist(spec string) (TokenDist, error) {
	s := strings.TrimSpace(spec)
	d := TokenDist{spec: s}
	if s == "" {
		return TokenDist{}, nil
	}
	positive := func(v string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%q: want a token count of at least 1 (512), a normal 512±64, or uniform:256-768", spec)
		}
		return n, nil
	}
	var err error
	if rest, ok := strings.CutPrefix(s, "uniform:"); ok {
		lo, hi, ok := strings.Cut(rest, "-")
		if !ok {
			return d, fmt.Errorf("%q: want uniform:MIN-MAX, e.g. uniform:256-768", spec)
		}
		d.Kind = "uniform"
		if d.Min, err = positive(lo); err != nil {
			return d, err
		}
		if d.Max, err = positive(hi); err != nil {
			return d, err
		}
		if d.Min > d.Max {
			return d, fmt.Errorf("%q: the minimum is above the maximum", spec)
		}
		return d, nil
	}
	for _, sep := range []string{"±", "+-"} {
		if mean, sd, ok := strings.Cut(s, sep); ok {
			d.Kind = "normal"
			if d.Mean, err = positive(mean); err != nil {
				return d, err
			}
			if d.Stddev, err = strconv.Atoi(strings.TrimSpace(sd)); err != nil || d.Stddev < 0 {
				return d, fmt.Errorf("%q: want MEAN±STDDEV, e.g. 512±64", spec)
			}
			return d, nil
		}
	}
	d.Kind = "fixed"
	d.Mean, err = positive(s)
	return d, err
}

// String is the distribution as written.
func (d TokenDist) String() string { return d.spec }

// Sample draws one count from r (at least 1).
func (d TokenDist) Sample(r *rand.Rand) int {
	switch d.Kind {
	case "normal":
		return max(int(math.Round(float64(d.Mean)+r.NormFloat64()*float64(d.Stddev))), 1)
	case "uniform":
		return d.Min + r.IntN(d.Max-d.Min+1)
	}
	return max(d.Mean, 1)
}

// MaxPrompts bounds the prompts read from a file; a larger file is sampled from its first
// MaxPrompts.
const MaxPrompts = 100_000

// LoadPrompts reads a prompt file: JSON Lines of strings, {"prompt"} (or "text"), OpenAI-style
// {"messages"} or ShareGPT records, or one JSON array of them. A ShareGPT record is sent up to
// its first human turn (its system turn kept), its reply's length the prompt's ReplyTokens.
func LoadPrompts(path string) ([]Prompt, error) {
	var raws [][]byte
	err := eachRecord(path, "prompt", "", func(where string, raw []byte) (bool, error) {
		if !json.Valid(raw) {
			return false, fmt.Errorf("%s: not a JSON value", where)
		}
		raws = append(raws, slices.Clone(raw))
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	var out []Prompt
	for i, raw := range raws {
		if len(out) == MaxPrompts {
			break
		}
		p, err := parsePrompt(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: prompt %d: %w", path, i+1, err)
		}
		if p != nil {
			out = append(out, *p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no prompt (want JSON Lines of strings, {\"prompt\":…}, {\"messages\":[…]} or ShareGPT records)", path)
	}
	return out, nil
}

// eachRecord calls each with the values of a file, one JSON array's elements (where: "path:
// NOUN i") or JSON Lines ("path:line"), until each says stop or fails; scanNote follows a
// line's read error.
func eachRecord(path, noun, scanNote string, each func(where string, raw []byte) (bool, error)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(t, &raws); err != nil {
			return fmt.Errorf("%s: a JSON array of %ss: %w", path, noun, err)
		}
		for i, raw := range raws {
			if more, err := each(fmt.Sprintf("%s: %s %d", path, noun, i+1), raw); !more || err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			if more, err := each(fmt.Sprintf("%s:%d", path, line), l); !more || err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w%s", path, err, scanNote)
	}
	return nil
}

// parsePrompt reads one record; nil for a ShareGPT record without a human turn (skipped, as
// vLLM's and GuideLLM's loaders skip them).
func parsePrompt(raw json.RawMessage) (*Prompt, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &Prompt{Messages: []protocol.Message{{Role: "user", Text: s}}}, nil
	}
	var rec struct {
		Prompt   *string `json:"prompt"`
		Text     *string `json:"text"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Conversations []struct {
			From  string `json:"from"`
			Value string `json:"value"`
		} `json:"conversations"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("want a string or an object: %w", err)
	}
	switch {
	case rec.Prompt != nil:
		return &Prompt{Messages: []protocol.Message{{Role: "user", Text: *rec.Prompt}}}, nil
	case rec.Text != nil:
		return &Prompt{Messages: []protocol.Message{{Role: "user", Text: *rec.Text}}}, nil
	case len(rec.Messages) > 0:
		p := &Prompt{}
		for j, m := range rec.Messages {
			text, err := contentString(m.Content)
			if err != nil {
				return nil, fmt.Errorf("messages[%d].content: %w", j, err)
			}
			switch m.Role {
			case "system", "user", "assistant":
			case "developer":
				m.Role = "system"
			default:
				return nil, fmt.Errorf("messages[%d].role %q: want system, user or assistant", j, m.Role)
			}
			p.Messages = append(p.Messages, protocol.Message{Role: m.Role, Text: text})
		}
		if p.Messages[len(p.Messages)-1].Role != "user" {
			return nil, fmt.Errorf("the last message is %q: want the user's", p.Messages[len(p.Messages)-1].Role)
		}
		return p, nil
	case len(rec.Conversations) > 0:
		p := &Prompt{}
		for j, c := range rec.Conversations {
			switch c.From {
			case "system":
				p.Messages = append(p.Messages, protocol.Message{Role: "system", Text: c.Value})
			case "human", "user":
				p.Messages = append(p.Messages, protocol.Message{Role: "user", Text: c.Value})
				if j+1 < len(rec.Conversations) {
					var tc scenarios.TokenCounter
					p.ReplyTokens = tc.Text(rec.Conversations[j+1].Value)
				}
				return p, nil
			}
		}
		return nil, nil
	}
	return nil, errors.New(`want a string, {"prompt":…}, {"messages":[…]} or a ShareGPT {"conversations":[…]}`)
}

// contentString is a message content: a string, or an array of parts whose text parts join.
func contentString(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or an array of text parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// DefaultInputTokens is the synthetic prompt's length when only --output-tokens is given.
const DefaultInputTokens = 512
