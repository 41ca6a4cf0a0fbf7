package openairesponses

import (
	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// eventView is what the checker and the decoder read of one event, with presence; slices alias
// the event or the scanner's buffer until the next (reused: a warm reader allocates nothing). A
// nil slice is an absent or null member.
type eventView struct {
	typ             []byte
	seq             int
	hasSeq          bool
	outputIndex     int
	hasOutputIndex  bool
	contentIndex    int
	hasContentIndex bool
	summaryIndex    int
	hasSummaryIndex bool
	itemID          []byte
	delta           []byte
	hasDelta        bool
	text            []byte
	hasText         bool
	arguments       []byte
	hasArguments    bool
	hasItem         bool
	item            itemView
	hasPart         bool
	part            partView
	hasResponse     bool
	response        responseView
	message         []byte // an error event's message (OpenAI's shape)
	hasError        bool   // an error event's error object (the specification's shape)
	errMessage      []byte // error.message
}

type itemView struct {
	id, typ, status, role, callID, name []byte
	arguments                           []byte
	hasArguments                        bool
	content                             []partView
	summary                             []partView
}

// partView is a content or summary part: its type and text (a refusal's refusal).
type partView struct {
	typ, text []byte
	hasText   bool
}

type responseView struct {
	status       []byte
	hasUsage     bool
	outputTokens int
	hasTokens    bool
	hasError     bool
	errMessage   []byte
	hasOutput    bool
	output       []itemView
}

// parseEvent fills v from one event's JSON, validating and skipping the rest.
func parseEvent(sc *jsonwire.Scanner, data []byte, v *eventView) error {
	sc.Reset(data)
	item, output := v.item, v.response.output[:0]
	*v = eventView{item: itemView{content: item.content[:0], summary: item.summary[:0]}, response: responseView{output: output}}
	if !sc.Object("event") {
		return sc.Finish()
	}
	for key := range sc.Members() {
		switch string(key) {
		case "type":
			v.typ = sc.Str("type")
		case "sequence_number":
			v.seq, v.hasSeq = sc.Integer("sequence_number")
		case "output_index":
			v.outputIndex, v.hasOutputIndex = sc.Integer("output_index")
		case "content_index":
			v.contentIndex, v.hasContentIndex = sc.Integer("content_index")
		case "summary_index":
			v.summaryIndex, v.hasSummaryIndex = sc.Integer("summary_index")
		case "item_id":
			v.itemID = sc.Str("item_id")
		case "delta":
			v.delta = sc.Str("delta")
			v.hasDelta = sc.Err() == nil
		case "text", "refusal": // response.refusal.done carries its text as refusal
			v.text = sc.Str("text")
			v.hasText = sc.Err() == nil
		case "arguments":
			v.arguments = sc.Str("arguments")
			v.hasArguments = sc.Err() == nil
		case "message":
			v.message = sc.Str("message")
		case "item":
			v.hasItem = parseItem(sc, "item", &v.item)
		case "part":
			v.hasPart = parsePart(sc, "part", &v.part)
		case "response":
			v.hasResponse = parseResponse(sc, &v.response)
		case "error":
			v.hasError = sc.StrIn("error", "message", "error.message", &v.errMessage)
		default:
			sc.Skip()
		}
	}
	return sc.Finish()
}

// parseItem reads an output item at field (false at null), reusing its slices.
func parseItem(sc *jsonwire.Scanner, field string, it *itemView) bool {
	content, summary := it.content[:0], it.summary[:0]
	*it = itemView{}
	defer func() { it.content, it.summary = content, summary }()
	if !sc.Object(field) {
		return false
	}
	for key := range sc.Members() {
		switch string(key) {
		case "id":
			it.id = sc.Str("item.id")
		case "type":
			it.typ = sc.Str("item.type")
		case "status":
			it.status = sc.Str("item.status")
		case "role":
			it.role = sc.Str("item.role")
		case "call_id":
			it.callID = sc.Str("item.call_id")
		case "name":
			it.name = sc.Str("item.name")
		case "arguments":
			it.arguments = sc.Str("item.arguments")
			it.hasArguments = sc.Err() == nil
		case "content":
			content = parseParts(sc, "item.content", "item.content[]", content)
		case "summary":
			summary = parseParts(sc, "item.summary", "item.summary[]", summary)
		default:
			sc.Skip()
		}
	}
	return true
}

// parseParts reads an array of parts into parts[:0]; elem names an element (a constant).
func parseParts(sc *jsonwire.Scanner, field, elem string, parts []partView) []partView {
	parts = parts[:0]
	if !sc.Array(field) {
		return parts
	}
	for first := true; sc.Element(&first); {
		parts = append(parts, partView{})
		parsePart(sc, elem, &parts[len(parts)-1])
	}
	return parts
}

// parsePart reads a content or summary part (false at null).
func parsePart(sc *jsonwire.Scanner, field string, p *partView) bool {
	*p = partView{}
	if !sc.Object(field) {
		return false
	}
	for key := range sc.Members() {
		switch string(key) {
		case "type":
			p.typ = sc.Str("part.type")
		case "text", "refusal":
			p.text = sc.Str("part.text")
			p.hasText = sc.Err() == nil
		default:
			sc.Skip()
		}
	}
	return true
}

// parseResponse reads the response object of a lifecycle event (false at null).
func parseResponse(sc *jsonwire.Scanner, r *responseView) bool {
	output := r.output[:0]
	*r = responseView{}
	defer func() { r.output = output }()
	if !sc.Object("response") {
		return false
	}
	for key := range sc.Members() {
		switch string(key) {
		case "status":
			r.status = sc.Str("response.status")
		case "usage":
			r.hasUsage = sc.IntegerIn("response.usage", "output_tokens", "response.usage.output_tokens", &r.outputTokens, &r.hasTokens)
		case "error":
			r.hasError = sc.StrIn("response.error", "message", "response.error.message", &r.errMessage)
		case "output":
			if r.hasOutput = sc.Array("response.output"); !r.hasOutput {
				continue
			}
			for first := true; sc.Element(&first); {
				var reuse itemView
				if len(output) < cap(output) {
					reuse = output[:len(output)+1][len(output)]
				}
				output = append(output, reuse)
				parseItem(sc, "response.output[]", &output[len(output)-1])
			}
		default:
			sc.Skip()
		}
	}
	return true
}
