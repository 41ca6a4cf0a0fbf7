// Package mocktest starts the mock provider for other packages' tests. It lives apart so that
// the protocol test kits need not import the mock (their arrows point down).
package mocktest

import (
	"cmp"
	"net/http/httptest"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/scenarios"
)

// Start serves the embedded library with no delays and fault for the test; it returns the URL.
func Start(t testing.TB, fault mockprovider.Fault) string {
	t.Helper()
	_, ts := Serve(t, mockprovider.Options{Fault: fault})
	return ts.URL
}

// Serve serves a mock with opts (nil Library: the embedded one) on HTTP/1.1 and h2c, as a
// runtime reaches its provider, until the test ends.
func Serve(t testing.TB, opts mockprovider.Options) (*mockprovider.Server, *httptest.Server) {
	t.Helper()
	opts.Library = cmp.Or(opts.Library, scenarios.Embedded())
	srv, err := mockprovider.New(opts)
	if err != nil {
		t.Fatalf("mockprovider.New: %v", err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.Protocols = mockprovider.Protocols()
	ts.Start()
	t.Cleanup(ts.Close)
	return srv, ts
}
