// Command ollama-responses serves OpenAI's Responses API with Ollama's own implementation
// (middleware.ResponsesMiddleware, what `ollama serve` answers POST /v1/responses with) in
// front of a scripted model: a chat handler streaming each turn of a streambench scenario on
// Ollama's native NDJSON chat wire, as its ChatHandler writes it. The turn is the directive's
// in the first user message and the assistant messages already in the input, so `streambench
// load --dialect openai-responses` knows every stream's ground truth (run.sh; docs/INTEROP.md,
// "Ollama's Responses API"). A module of its own, so streambench does not depend on Ollama.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/middleware"

	"github.com/streambench/streambench/scenarios"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	timeScale := flag.Float64("time-scale", 1, "multiply every scripted delay by this (0: no delays)")
	flag.Parse()
	if *timeScale < 0 {
		log.Fatalf("--time-scale %v: want 0 or more", *timeScale)
	}
	gin.SetMode(gin.ReleaseMode)
	m := &model{lib: scenarios.Embedded(), scale: *timeScale}
	r := gin.New()
	r.POST("/v1/responses", middleware.ResponsesMiddleware(), m.chat)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ollama-responses: listening on http://%s\n", ln.Addr())
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

type model struct {
	lib   *scenarios.Library
	scale float64
}

// chat answers the api.ChatRequest the Responses middleware made with the scenario turn it asks for.
func (m *model) chat(c *gin.Context) {
	var req api.ChatRequest
	if err := c.ShouldBindJSON(&req); err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": err.Error()})
		return
	}
	turn, err := m.turn(&req)
	if err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": err.Error()})
		return
	}
	if turn.HTTPStatus != 0 {
		c.AbortWithStatusJSON(turn.HTTPStatus, gin.H{"error": turn.ErrorMessage})
		return
	}
	if req.Stream != nil && !*req.Stream {
		c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": "only streamed requests are scripted (stream: true)"})
		return
	}
	c.Header("Content-Type", "application/x-ndjson")
	c.Status(http.StatusOK)
	start := time.Now()
	write := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := c.Writer.Write(append(b, '\n')); err != nil {
			return false
		}
		c.Writer.Flush()
		return true
	}
	chunk := func(msg api.Message) api.ChatResponse {
		msg.Role = "assistant"
		return api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: msg}
	}
	// Ollama's runner parses a tool call out of the model's output whole: each is sent once
	// its last argument piece has been generated.
	args := make([]strings.Builder, len(turn.ToolCalls))
	last := make([]int, len(turn.ToolCalls))
	for i, st := range turn.Steps {
		if st.Kind == scenarios.StepToolArgs {
			last[st.Tool] = i
		}
	}
	for i, st := range turn.Steps {
		if wait := time.Duration(float64(st.At)*m.scale) - time.Since(start); wait > 0 {
			select {
			case <-c.Request.Context().Done():
				return
			case <-time.After(wait):
			}
		}
		ok := true
		switch st.Kind {
		case scenarios.StepThinking:
			ok = write(chunk(api.Message{Thinking: st.Text}))
		case scenarios.StepText:
			ok = write(chunk(api.Message{Content: st.Text}))
		case scenarios.StepToolArgs:
			args[st.Tool].WriteString(st.Text)
			if last[st.Tool] == i {
				call := turn.ToolCalls[st.Tool]
				tc := api.ToolCall{ID: call.ID, Function: api.ToolCallFunction{Index: st.Tool, Name: call.Name}}
				if err := json.Unmarshal([]byte(args[st.Tool].String()), &tc.Function.Arguments); err != nil {
					write(gin.H{"error": fmt.Sprintf("tool call %s: arguments: %v", call.ID, err)})
					return
				}
				ok = write(chunk(api.Message{ToolCalls: []api.ToolCall{tc}}))
			}
		}
		if !ok {
			return
		}
		if turn.ErrorAfterStep == i {
			write(gin.H{"error": turn.ErrorMessage})
			return
		}
	}
	if turn.ErrorAfterStep >= len(turn.Steps) {
		write(gin.H{"error": turn.ErrorMessage})
		return
	}
	done := chunk(api.Message{})
	done.Done, done.DoneReason = true, "stop"
	done.PromptEvalCount, done.EvalCount = turn.InputTokens, turn.OutputTokens
	write(done)
}

// turn finds the scenario turn req is at: its first user message's directive, and a turn
// played per assistant message.
func (m *model) turn(req *api.ChatRequest) (*scenarios.ScriptTurn, error) {
	var dir scenarios.Directive
	found, n := false, 0
	for _, msg := range req.Messages {
		switch {
		case msg.Role == "assistant":
			n++
		case msg.Role == "user" && !found:
			d, ok, err := scenarios.ParseDirective(msg.Content)
			if err != nil {
				return nil, err
			}
			dir, found = d, ok
		}
	}
	if !found {
		return nil, errors.New("no streambench directive in the first user message: put [[streambench scenario=NAME seed=N]] there")
	}
	sc, ok := m.lib.Get(dir.Scenario)
	if !ok {
		return nil, fmt.Errorf("unknown scenario %q", dir.Scenario)
	}
	script := sc.Render(dir.Seed)
	if n >= len(script.Turns) {
		return nil, fmt.Errorf("scenario %s has %d turns; the input is at turn %d", dir.Scenario, len(script.Turns), n+1)
	}
	return &script.Turns[n], nil
}
