package mockprovider

import (
	"context"
	"reflect"
	"testing"

	"github.com/streambench/streambench/mockrecords"
)

// TestFetchSessionsReadsWhatTheEndpointServes plays two requests and reads them back through
// mockrecords' client: the records equal the server's own, and a base URL with a trailing slash works.
func TestFetchSessionsReadsWhatTheEndpointServes(t *testing.T) {
	t.Parallel()
	srv, ts := newTestMock(t, Options{TimeScale: 0})
	for _, s := range []string{"one", "two"} {
		resp := post(t, ts.Client(), ts.URL+PathOpenAI, openaiBody(directive("plain-answer", 4, s), true), nil)
		drain(resp)
	}
	recs, err := mockrecords.Client{HTTP: ts.Client(), URL: ts.URL + "/"}.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !reflect.DeepEqual(stripMonotonic(recs), stripMonotonic(srv.Sessions(""))) {
		t.Errorf("fetched %+v, server holds %+v", recs, srv.Sessions(""))
	}
}
