package loadgen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
)

// CheckURL checks that raw, flag's value, is an http(s) base URL with a host, never quoting its userinfo.
func CheckURL(flag, raw string) error {
	shown := RedactURL(raw)
	u, err := url.Parse(raw)
	switch {
	case err != nil && !strings.Contains(raw, "://"):
		return fmt.Errorf("%s %q: not a URL: want http://HOST:PORT or https://HOST:PORT (the scheme is missing)", flag, shown)
	case err != nil:
		return fmt.Errorf("%s %q: not a URL: %v", flag, shown, errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		if u.Opaque != "" || !strings.Contains(raw, "://") {
			return fmt.Errorf("%s %q: want http://HOST:PORT or https://HOST:PORT (the scheme is missing)", flag, shown)
		}
		return fmt.Errorf("%s %q: scheme %q: want http or https", flag, shown, u.Scheme)
	case u.Host == "":
		return fmt.Errorf("%s %q: no host: want http://HOST:PORT or https://HOST:PORT", flag, shown)
	}
	return nil
}

// PreflightHeader marks the preflight requests (value "1"), for a target's logs.
const PreflightHeader = "X-Streambench-Preflight"

// preflightTimeout bounds how long a preflight request waits for its response head.
const preflightTimeout = 10 * time.Second

// PreflightError is a stream route that cannot work: its transport failed, or it answered 404 or 405.
type PreflightError struct {
	Route string // the request, "POST URL" (userinfo redacted)
	More  int    // the other routes that failed
	Err   error
}

func (e *PreflightError) Error() string {
	more := ""
	if e.More > 0 {
		more = fmt.Sprintf(" (and %d more routes)", e.More)
	}
	return fmt.Sprintf("preflight: %s: %v%s; no load was sent (--no-preflight to run anyway)", e.Route, e.Err, more)
}

func (e *PreflightError) Unwrap() error { return e.Err }

// Preflight sends one request (marked PreflightHeader) per distinct stream route of c's mix, the
// rest only if the first passed, and hangs up after the head: a *PreflightError for a route that
// cannot work, warnings for heads not in time; an invalid Config is Validate's error, nothing sent.
func Preflight(ctx context.Context, c Config) (warnings []string, err error) {
	cfg, err := c.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	opts, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	cfg.RunID = cmp.Or(cfg.RunID, "preflight")
	r := &runner{cfg: cfg, reqOpts: opts, planner: cfg.planner()}
	r.redactor = newRunRedactor(&cfg, opts)
	client := cfg.oneClient()
	defer client.CloseIdleConnections()

	var reqs []*http.Request
	seen := map[string]bool{}
	for i := range cfg.Mix.Profiles {
		prof := &cfg.Mix.Profiles[i]
		if len(prof.scenarioNames) == 0 {
			continue
		}
		scenario := prof.scenarioNames[0]
		if slices.Contains(prof.scenarioNames, "plain-answer") {
			scenario = "plain-answer"
		}
		for j, t := range prof.Targets {
			pick := Pick{Scenario: scenario, Seed: 1, Profile: prof, Target: t, ProfileIndex: i, TargetIndex: j}
			p := r.planOf(pick, fmt.Sprintf("%s-preflight-%d-%d", r.cfg.RunID, i, j))
			req, err := p.Client.NewRequest(ctx, cfg.Target, p.Session)
			if err != nil {
				return nil, fmt.Errorf("load: preflight: profile %d target %s: %w", i, t.Slug, err)
			}
			session.ApplyStreamHeader(req, p.Header)
			req.Header.Set(PreflightHeader, "1")
			key := req.Method + " " + req.URL.String()
			if !seen[key] {
				seen[key] = true
				reqs = append(reqs, req)
			}
		}
	}

	var (
		mu       sync.Mutex
		failures []*PreflightError
		wg       sync.WaitGroup
		sem      = make(chan struct{}, 8)
	)
	check := func(req *http.Request) {
		route := req.Method + " " + r.redactor.URL(req.URL.String())
		fail, warn := preflightOne(ctx, client, req)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case fail != nil:
			failures = append(failures, &PreflightError{Route: route, Err: r.redactor.Error(fail)})
		case warn != "":
			warnings = append(warnings, fmt.Sprintf("preflight: %s: %s", route, r.redactor.String(warn)))
		}
	}
	// The first route alone, then the others a few at a time.
	if len(reqs) > 0 {
		check(reqs[0])
	}
	for _, req := range reqs[min(1, len(reqs)):] {
		if len(failures) > 0 {
			break
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			check(req)
		})
	}
	wg.Wait()
	slices.Sort(warnings)
	if len(failures) == 0 {
		return warnings, nil
	}
	slices.SortFunc(failures, func(a, b *PreflightError) int { return strings.Compare(a.Route, b.Route) })
	first := failures[0]
	first.More = len(failures) - 1
	return warnings, first
}

// oneClient is a client for a few requests outside the load.
func (c Config) oneClient() *http.Client {
	rt := c.Transport
	if rt == nil {
		c.Clients, c.Rate, c.Stages, c.MaxInflight = 1, 0, nil, 1
		rt = newTransport(&c)
	}
	return &http.Client{Transport: rt, CheckRedirect: noRedirects}
}

// preflightOne sends req and judges its response head.
func preflightOne(ctx context.Context, client *http.Client, req *http.Request) (fail error, warn string) {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Sprintf("no response head within %s (the run will measure it)", preflightTimeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the route is already named
		}
		return err, ""
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		what := "the route is wrong (--path, --slug, the mix's targets or --dialect)"
		if resp.StatusCode == http.StatusMethodNotAllowed {
			what = "the route does not take this method (--path or --dialect)"
		}
		msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
		if b := strings.Join(strings.Fields(string(body)), " "); b != "" {
			msg += " " + measure.Clip(b, 120)
		}
		return fmt.Errorf("%s: %s", msg, what), ""
	}
	return nil, ""
}

// Validate checks c as Run would before sending anything.
func (c Config) Validate() error {
	cfg, err := c.withDefaults()
	if err == nil {
		_, err = cfg.resolve()
	}
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	return nil
}
