package clientturn_test

import (
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/protocol/openairesponses"
)

// TestOpenAIResponsesLibraryClean plays every embedded scenario, every turn, against the mock's Responses
// wire: a correct provider breaks no rule, with ground truth and without, and the frames are
// classified and counted as the load generator's token metrics need.
func TestOpenAIResponsesLibraryClean(t *testing.T) {
	t.Parallel()
	LibraryClean(t, mocktest.Start(t, mockprovider.FaultNone), openairesponses.New(), openairesponses.New(clientturn.WithNoGroundTruth()))
}

// TestOpenAIResponsesLibraryCleanRequireDone: the mock ends every stream with data: [DONE], so the strict
// mode passes it too.
func TestOpenAIResponsesLibraryCleanRequireDone(t *testing.T) {
	t.Parallel()
	LibraryClean(t, mocktest.Start(t, mockprovider.FaultNone), openairesponses.New(clientturn.WithRequireDone()),
		openairesponses.New(clientturn.WithNoGroundTruth(), clientturn.WithRequireDone()))
}
