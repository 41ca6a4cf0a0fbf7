package loadgen

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/textproto"
	"slices"
	"strings"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/modeltokens"
	"github.com/streambench/streambench/protocol"
)

// Redacted replaces a secret header value wherever one would be written or printed.
const Redacted = "<redacted>"

// SensitiveHeader tells whether a header's value is a credential, never to be written or printed.
func SensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	// By words, not letters: x-portkey-api-key is a secret, x-portkey-provider is not.
	for _, part := range strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		switch {
		case part == "key", part == "apikey", part == "auth", part == "signature",
			strings.Contains(part, "token"), strings.Contains(part, "secret"), strings.Contains(part, "password"):
			return true
		}
	}
	return false
}

// ParseHeader parses "Name: value" (value trimmed, maybe empty); its error never quotes a value.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	shown := s
	if i := strings.IndexAny(s, ": \t"); i >= 0 {
		shown = s[:i] + "…"
	}
	if !ok {
		return "", "", fmt.Errorf("%q: want \"Name: value\" (no colon)", shown)
	}
	if name == "" || strings.TrimLeft(name, tokenChars) != "" {
		return "", "", fmt.Errorf("%q: header name %q is not a token (letters, digits and !#$%%&'*+-.^_`|~)", shown, name)
	}
	value = strings.TrimSpace(value)
	if strings.ContainsAny(value, "\r\n\x00") {
		return "", "", fmt.Errorf("header %s: the value holds a line break or NUL", name)
	}
	return textproto.CanonicalMIMEHeaderKey(name), value, nil
}

// tokenChars are the bytes of a header name (RFC 9110's tchar).
const tokenChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~"

// ParseHeaders parses repeated "Name: value" flags; a name given twice keeps both values.
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

// RedactedHeaders formats h as "Name: value" lines in name order, sensitive values Redacted.
func RedactedHeaders(h http.Header) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[name] {
			if SensitiveHeader(name) {
				v = Redacted
			}
			out = append(out, name+": "+v)
		}
	}
	return out
}

// resolve configures every profile × target once; an option no profile's dialect takes is an error.
func (c *Config) resolve() ([][]session.Request, error) {
	out := make([][]session.Request, len(c.Mix.Profiles))
	var errs []error
	taken := map[string]bool{}
	for i := range c.Mix.Profiles {
		p := &c.Mix.Profiles[i]
		where := fmt.Sprintf("mix %s: profiles[%d]", c.MixName, i)
		if p.Name != "" {
			where += " (" + p.Name + ")"
		}
		d, err := c.Dialects.Lookup(p.Dialect)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.dialect: %w", where, err))
			continue
		}
		var header http.Header
		if len(p.Headers) > 0 || len(c.Headers) > 0 {
			header = make(http.Header, len(p.Headers)+len(c.Headers))
			for name, v := range p.Headers {
				header.Set(name, v)
			}
			for name, vs := range c.Headers {
				header[textproto.CanonicalMIMEHeaderKey(name)] = slices.Clone(vs)
			}
		}
		cli := protocol.Options{}
		for _, spec := range d.Options() {
			if v, ok := c.Options[spec.Key]; ok {
				cli[spec.Key], taken[spec.Key] = v, true
			}
		}
		out[i] = make([]session.Request, len(p.Targets))
		var first string // the first target with an error
		var firstErr error
		var more int // targets after it with the same error
		for j, t := range p.Targets {
			opts := protocol.MergeOptions(p.Options, t.Options, cli)
			cl, err := d.Configure(t.Slug, opts)
			switch {
			case err == nil:
				model, _ := opts["model"].(string)
				out[i][j] = session.Request{Client: cl, Header: header, Encoding: modeltokens.ForModel(model)}
			case firstErr != nil && err.Error() == firstErr.Error():
				more++
			default:
				if firstErr != nil {
					errs = append(errs, targetError(where, first, more, firstErr))
				}
				first, firstErr, more = fmt.Sprintf("targets[%d] (%s)", j, t.Slug), err, 0
			}
		}
		if firstErr != nil {
			errs = append(errs, targetError(where, first, more, firstErr))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Options)) {
		if !taken[k] {
			errs = append(errs, fmt.Errorf("option %s: no dialect of mix %s takes it (%s)", k, c.MixName, strings.Join(c.Mix.Dialects(), ", ")))
		}
	}
	return out, errors.Join(errs...)
}

// targetError names where a target's configuration failed, and how many more failed alike.
func targetError(profile, target string, more int, err error) error {
	if more > 0 {
		return fmt.Errorf("%s.%s and %d more: %w", profile, target, more, err)
	}
	return fmt.Errorf("%s.%s: %w", profile, target, err)
}

// minEchoedSecret is the shortest sensitive header value (or part) searched for in free text,
// so that a value like "openai" does not blank out a common word everywhere.
const minEchoedSecret = 8

// newRunRedactor is the redactor of a run's headers, URLs and Config.Redact.
func newRunRedactor(cfg *Config, opts [][]session.Request) *Redactor {
	var headers []http.Header
	for _, prs := range opts {
		if len(prs) > 0 && prs[0].Header != nil {
			headers = append(headers, prs[0].Header)
		}
	}
	return NewRedactor(headers, []string{cfg.Target, cfg.MockURL, cfg.RuntimeMetricsURL, cfg.EngineMetricsURL}, cfg.Redact)
}
