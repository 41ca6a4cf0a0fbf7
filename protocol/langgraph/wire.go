package langgraph

import (
	"encoding/json"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Event names of the run stream (a subgraph's carry its namespace after a bar: values|tools:1).
const (
	EventMetadata = "metadata" // first: {"run_id": …, "attempt": n}
	EventMessages = "messages" // stream_mode messages-tuple: [message chunk, metadata]
	EventValues   = "values"   // stream_mode values: the whole state after a step
	EventUpdates  = "updates"  // stream_mode updates: {node: the node's update}
	EventError    = "error"    // the run failed: {"error": name, "message": text}
	EventEnd      = "end"      // an explicit end some servers send (data null); optional
)

// Stream modes the dialect requests (messages-tuple's events are called messages).
const (
	ModeMessagesTuple = "messages-tuple"
	ModeValues        = "values"
	ModeUpdates       = "updates"
)

// On-disconnect behaviours (the request's on_disconnect).
const (
	OnDisconnectCancel   = "cancel"
	OnDisconnectContinue = "continue"
)

// Message types as LangChain serializes them.
const (
	TypeAIChunk = "AIMessageChunk"
	TypeAI      = "ai"
	TypeHuman   = "human"
	TypeTool    = "tool"
)

// Message is a LangChain message as the server serializes it: a chunk, or a state's message.
type Message struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	// Content is a string, or a list of content blocks ({"type":"text","text":…}).
	Content        json.RawMessage `json:"content"`
	ToolCalls      []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallChunks []ToolCallChunk `json:"tool_call_chunks,omitempty"`
	// ToolCallID and Status describe a tool message ("success" or "error").
	ToolCallID string `json:"tool_call_id,omitempty"`
	Status     string `json:"status,omitempty"`
	Name       string `json:"name,omitempty"`
}

// ToolCall is a complete tool call of an AI message; Args is a JSON object.
type ToolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	ID   string          `json:"id"`
	Type string          `json:"type,omitempty"`
}

// ToolCallChunk is a piece of a streamed tool call (its index's first carries id and name).
type ToolCallChunk struct {
	Name  *string `json:"name"`
	Args  *string `json:"args"`
	ID    *string `json:"id"`
	Index *int    `json:"index"`
	Type  string  `json:"type,omitempty"`
}

// ChunkMetadata is a messages-tuple event's second element: where the chunk came from.
type ChunkMetadata struct {
	RunID string `json:"run_id,omitempty"`
	Node  string `json:"langgraph_node"`
	Step  int    `json:"langgraph_step"`
}

// State is the graph state of a ReAct agent: its messages.
type State struct {
	Messages []Message `json:"messages"`
}

// Metadata is the metadata event's data.
type Metadata struct {
	RunID   string `json:"run_id"`
	Attempt int    `json:"attempt"`
}

// RunError is the error event's data.
type RunError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// ContentText returns a message content's text: the string itself, or the text of its text
// blocks in order; ok is false for content of another shape.
func ContentText(raw json.RawMessage) (text string, ok bool) {
	text, err := jsonwire.ContentText(raw, "text")
	return text, err == nil
}

// TextContent encodes text as a message's string content.
func TextContent(text string) json.RawMessage {
	b, _ := json.Marshal(text)
	return b
}
