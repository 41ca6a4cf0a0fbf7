package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
)

// Redacted replaces a secret header value wherever one would be written or printed.
const Redacted = "<redacted>"

// SensitiveHeader tells whether a header's value is a credential that must never be written to
// disk or printed: Authorization, Proxy-Authorization, Cookie, Set-Cookie, and any name that
// contains token, key or secret (case-insensitive: x-runtime-internal-token, X-Api-Key).
func SensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return strings.Contains(n, "token") || strings.Contains(n, "key") || strings.Contains(n, "secret")
}

// ParseHeader parses "Name: value" (the value trimmed; it may be empty). The error never
// quotes a value: the text is shown only up to the first space or colon, the presumed name.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	shown := s
	if i := strings.IndexAny(s, ": \t"); i >= 0 {
		shown = s[:i] + "…"
	}
	if !ok {
		return "", "", fmt.Errorf("%q: want \"Name: value\" (no colon)", shown)
	}
	if name == "" || !validHeaderName(name) {
		return "", "", fmt.Errorf("%q: header name %q is not a token (letters, digits and !#$%%&'*+-.^_`|~)", shown, name)
	}
	value = strings.TrimSpace(value)
	if strings.ContainsAny(value, "\r\n\x00") {
		return "", "", fmt.Errorf("header %s: the value holds a line break or NUL", name)
	}
	return textproto.CanonicalMIMEHeaderKey(name), value, nil
}

func validHeaderName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// ParseHeaders parses repeated "Name: value" flags into a header set; a name given twice keeps
// both values.
func ParseHeaders(list []string) (http.Header, error) {
	if len(list) == 0 {
		return nil, nil
	}
	h := make(http.Header, len(list))
	for _, s := range list {
		name, value, err := ParseHeader(s)
		if err != nil {
			return nil, err
		}
		h.Add(name, value)
	}
	return h, nil
}

// RedactedHeaders formats h as "Name: value" lines in name order, sensitive values replaced
// by Redacted: how headers are recorded in results and shown.
func RedactedHeaders(h http.Header) []string {
	var out []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range h[name] {
			if SensitiveHeader(name) {
				v = Redacted
			}
			out = append(out, name+": "+v)
		}
	}
	return out
}

// CheckPaths checks a dialect's stream and stop path templates ("" = the default) by
// building a request with each, so the placeholders a dialect knows stay the dialect's.
func CheckPaths(dialect, path, stopPath string) error {
	d := Dialects()[dialect]
	if d == nil {
		return fmt.Errorf("dialect %q unknown", dialect)
	}
	s := &protocol.Session{ID: "check", Target: "target", Path: path, StopPath: stopPath}
	if _, err := d.NewRequest(context.Background(), "http://127.0.0.1", s); err != nil {
		var pe *protocol.PathError
		if errors.As(err, &pe) {
			return pe
		}
		return err
	}
	st, ok := d.(protocol.Stopper)
	if !ok {
		if stopPath != "" {
			return fmt.Errorf("stop path %q: dialect %s has no stop request", stopPath, dialect)
		}
		return nil
	}
	resp := &http.Response{Header: http.Header{compose.RunIDHeader: {"run"}}}
	if _, err := st.NewStopRequest(context.Background(), "http://127.0.0.1", s, resp); err != nil {
		var pe *protocol.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("stop %w", pe)
		}
		if _, perr := compose.StopPathFor(path, stopPath); perr != nil {
			return perr
		}
		return err
	}
	return nil
}

// profileRequest is what a profile adds to every request it sends: headers (the mix
// profile's, then Config.Headers, which win for the same name) and path templates
// (Config.Path and StopPath win over the profile's).
type profileRequest struct {
	header         http.Header
	path, stopPath string
}

// requestOptions resolves every profile's request options once, before the run.
func (c *Config) requestOptions() (map[*Profile]*profileRequest, error) {
	out := make(map[*Profile]*profileRequest, len(c.Mix.Profiles))
	var errs []error
	for i := range c.Mix.Profiles {
		p := &c.Mix.Profiles[i]
		pr := &profileRequest{path: p.Path, stopPath: p.StopPath}
		if c.Path != "" {
			pr.path = c.Path
		}
		if c.StopPath != "" && p.Dialect == DialectCompose {
			pr.stopPath = c.StopPath
		}
		if len(p.Headers) > 0 || len(c.Headers) > 0 {
			pr.header = make(http.Header, len(p.Headers)+len(c.Headers))
			for name, v := range p.Headers {
				pr.header.Set(name, v)
			}
			for name, vs := range c.Headers {
				pr.header[textproto.CanonicalMIMEHeaderKey(name)] = slices.Clone(vs)
			}
		}
		if err := CheckPaths(p.Dialect, pr.path, pr.stopPath); err != nil {
			errs = append(errs, fmt.Errorf("profile %s (%s): %w", p.Name, p.Dialect, err))
		}
		out[p] = pr
	}
	return out, errors.Join(errs...)
}

// apply adds the profile's headers to req (Host sets the request's host).
func (pr *profileRequest) apply(req *http.Request) {
	for name, vs := range pr.header {
		if name == "Host" && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		req.Header[name] = vs
	}
}

// secretValues are the sensitive header values of every profile, for redacting text that
// might quote a request (an error body a server echoed).
func secretValues(opts map[*Profile]*profileRequest) *strings.Replacer {
	var pairs []string
	for _, pr := range opts {
		for name, vs := range pr.header {
			if !SensitiveHeader(name) {
				continue
			}
			for _, v := range vs {
				if v != "" && !slices.Contains(pairs, v) {
					pairs = append(pairs, v, Redacted)
				}
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	return strings.NewReplacer(pairs...)
}
