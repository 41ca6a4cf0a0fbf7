// Package dialects is the list of client dialects streambench ships: Default, the registry
// (protocol.Registry) the command line hands the load generator and the reports. A dialect is
// one package (see protocol.Dialect) with its own rules; adding it to Default is the one line
// that makes it, and them, available everywhere.
package dialects

import (
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/agui"
	"github.com/streambench/streambench/protocol/aisdk"
	"github.com/streambench/streambench/protocol/anthropicmessages"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/langgraph"
	"github.com/streambench/streambench/protocol/openaichat"
	"github.com/streambench/streambench/protocol/openairesponses"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
)

// Default returns the registry of every dialect streambench ships, in --help's order.
func Default() *protocol.Registry {
	r, err := protocol.NewRegistry(
		simchat.New(),
		simcanvas.New(),
		compose.New(),
		openaichat.New(),
		anthropicmessages.New(),
		openairesponses.New(),
		aisdk.New(aisdk.Options{}),
		agui.New(agui.Options{}),
		langgraph.New(langgraph.Options{}),
	)
	if err != nil {
		panic(err) // the built-in list has a duplicate name: a build defect, caught by tests
	}
	return r
}
