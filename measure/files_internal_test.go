package measure

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestCapReader: a file may be exactly its limit, not a byte more, and no line of a file of
// lines may be longer than its line limit, however the bytes arrive.
func TestCapReader(t *testing.T) {
	t.Parallel()
	lim := readLimit{bytes: 100, line: 10}
	read := func(data string) error {
		_, err := io.ReadAll(&capReader{r: bytes.NewReader([]byte(data)), left: lim.bytes, limits: lim})
		return err
	}
	exact := strings.Repeat("123456789\n", 10) // 100 bytes, lines of 9
	if err := read(exact); err != nil {
		t.Errorf("exactly the limit: %v", err)
	}
	var le *LimitError
	if err := read(exact + "1"); !errors.As(err, &le) || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Errorf("a byte over the limit: %v, want a LimitError", err)
	}
	if err := read("123456789\n1234567890\n12345678901\n"); !errors.As(err, &le) || err.Error() != "line 3 is longer than 10 bytes, the most a line of it can be" {
		t.Errorf("a line over the limit: %v", err)
	}
}
