// Package floorrelay is the bare relay the runtime's cost is compared with: no decoding or encoding at all.
package floorrelay

import (
	"bufio"
	"errors"
	"net/http"
)

// Handler forwards the request to upstream with client and copies the response line by line through a
// bufSize reader, flushing whenever nothing more is buffered (the runtime's flush policy).
func Handler(upstream string, client *http.Client, bufSize int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, upstream, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		br := bufio.NewReaderSize(resp.Body, bufSize)
		for {
			line, err := br.ReadSlice('\n')
			if len(line) > 0 {
				if _, werr := w.Write(line); werr != nil {
					return
				}
			}
			if br.Buffered() == 0 && rc.Flush() != nil {
				return
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return
			}
		}
	}
}
