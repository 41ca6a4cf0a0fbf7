package loadgen

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/streambench/streambench/measure"
)

// Redactor hides a run's secrets in everything the generator writes or prints: the userinfo
// of its URLs, every sensitive header's value and its parts (a server may echo a bare token),
// and Config.Redact's values, as written, URL-escaped and JSON-escaped. A nil *Redactor
// redacts nothing. It is safe for concurrent use.
type Redactor struct {
	replacer *strings.Replacer // nil: no secret
}

// minAuthCredential is the shortest credential after an auth scheme searched for in free text.
const minAuthCredential = 4

// NewRedactor returns the redactor of headers' sensitive values, urls' userinfo and extra.
func NewRedactor(headers []http.Header, urls []string, extra []string) *Redactor {
	var secrets []string
	add := func(v string, minLen int) {
		if len(v) >= max(minLen, 1) {
			secrets = append(secrets, v)
		}
	}
	for _, h := range headers {
		for name, vs := range h {
			if !SensitiveHeader(name) {
				continue
			}
			for _, v := range vs {
				headerSecrets(v, add)
			}
		}
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.User == nil {
			continue
		}
		add(u.User.String(), 1) // as written in the URL (escaped)
		name := u.User.Username()
		pass, hasPass := u.User.Password()
		if hasPass {
			add(name+":"+pass, 1)
			add(pass, minEchoedSecret)
		}
		add(name, minEchoedSecret)
	}
	for _, v := range extra {
		add(v, 1)
	}
	return newRedactor(secrets)
}

// headerSecrets passes a sensitive header's value and its parts (the credential after an auth
// scheme, decoded Basic, NAME=VALUE's value) to add, with the shortest length searched for.
func headerSecrets(v string, add func(string, int)) {
	add(v, minEchoedSecret)
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == ';' })
	for i, f := range fields {
		if i > 0 && slices.Contains(authSchemes, strings.ToLower(fields[i-1])) {
			add(f, minAuthCredential)
			if strings.EqualFold(fields[i-1], "basic") {
				if dec, err := base64.StdEncoding.DecodeString(f); err == nil {
					add(string(dec), minAuthCredential)
					if _, pass, ok := strings.Cut(string(dec), ":"); ok {
						add(pass, minEchoedSecret)
					}
				}
			}
			continue
		}
		if _, val, ok := strings.Cut(f, "="); ok {
			add(val, minEchoedSecret) // a cookie's value, a key=value credential: not its name
			continue
		}
		add(f, minEchoedSecret)
	}
}

// authSchemes are the HTTP authentication scheme words (RFC 9110 §11), lower case.
var authSchemes = []string{"bearer", "basic", "token", "digest", "apikey", "api-key", "key"}

func newRedactor(secrets []string) *Redactor {
	var all []string
	for _, s := range secrets {
		all = append(all, s, url.QueryEscape(s), url.PathEscape(s))
		if b, err := json.Marshal(s); err == nil {
			all = append(all, string(b[1:len(b)-1]))
		}
		if strings.Contains(s, "/") {
			all = append(all, strings.ReplaceAll(s, "/", `\/`)) // JSON as some encoders write it
		}
	}
	// Longest first: the replacer tries patterns in order, so "Bearer T" is replaced whole.
	slices.SortFunc(all, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	all = slices.Compact(all)
	if len(all) == 0 {
		return &Redactor{}
	}
	pairs := make([]string, 0, 2*len(all))
	for _, s := range all {
		pairs = append(pairs, s, Redacted)
	}
	return &Redactor{replacer: strings.NewReplacer(pairs...)}
}

// String returns s with every secret replaced by Redacted.
func (r *Redactor) String(s string) string {
	if r == nil || r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// URL returns raw with its userinfo replaced by Redacted and any other secret redacted.
func (r *Redactor) URL(raw string) string {
	return r.String(RedactURL(raw))
}

// RedactURL returns raw with its userinfo, if any, replaced by Redacted.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	s := u.String()
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	return scheme + "://" + Redacted + "@" + rest
}

// Error returns err with its message redacted; errors.Is and errors.As still see err.
func (r *Redactor) Error(err error) error {
	if err == nil || r == nil || r.replacer == nil {
		return err
	}
	msg := r.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Run redacts every string of run's summary and samples in place.
func (r *Redactor) Run(run *measure.Run) {
	if run == nil {
		return
	}
	s := &run.Summary
	s.Config.Target = RedactURL(s.Config.Target)
	s.Environment.Target = RedactURL(s.Environment.Target)
	if r == nil || r.replacer == nil {
		return
	}
	// The run id names the results directory and is the user's own: kept.
	id := s.RunID
	redactValue(reflect.ValueOf(s).Elem(), r.String)
	s.RunID = id
	for i := range run.Samples {
		redactValue(reflect.ValueOf(&run.Samples[i]).Elem(), r.String)
	}
}

// redactValue applies f in place to every string reachable from v but map keys (names).
func redactValue(v reflect.Value, f func(string) string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := f(v.String()); s != v.String() {
				v.SetString(s)
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			redactValue(v.Elem(), f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				redactValue(v.Field(i), f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			redactValue(v.Index(i), f)
		}
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.String {
			return // counts and the like
		}
		iter := v.MapRange()
		for iter.Next() {
			if s := f(iter.Value().String()); s != iter.Value().String() {
				v.SetMapIndex(iter.Key(), reflect.ValueOf(s).Convert(v.Type().Elem()))
			}
		}
	}
}
