package openairesponses_test

import (
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/protocol/internal/clienttest"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/protocol/openairesponses"
)

// TestLibraryClean plays every embedded scenario, every turn, against the mock's Responses
// wire: a correct provider breaks no rule, with ground truth and without, and the frames are
// classified and counted as the load generator's token metrics need.
func TestLibraryClean(t *testing.T) {
	t.Parallel()
	clienttest.LibraryClean(t, mocktest.Start(t, mockprovider.FaultNone), openairesponses.New(), openairesponses.New(clientturn.WithNoGroundTruth()))
}

// TestLibraryCleanRequireDone: the mock ends every stream with data: [DONE], so the strict
// mode passes it too.
func TestLibraryCleanRequireDone(t *testing.T) {
	t.Parallel()
	clienttest.LibraryClean(t, mocktest.Start(t, mockprovider.FaultNone), openairesponses.New(clientturn.WithRequireDone()),
		openairesponses.New(clientturn.WithNoGroundTruth(), clientturn.WithRequireDone()))
}
