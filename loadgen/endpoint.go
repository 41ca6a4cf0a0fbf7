package loadgen

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/scenarios"
)

// EndpointMix is an endpoint workload's mix: one profile of dialect, its target the model.
func EndpointMix(dialect, model string, seed uint64) (*Mix, error) {
	return NewMix("endpoint", cmp.Or(seed, 1), map[string]float64{scenarios.EndpointScenario: 1},
		[]Profile{{Name: dialect, Dialect: dialect, Weight: 1, Targets: []Target{{Slug: model}}}})
}

// ListModels returns the ids of the target's models (GET /v1/models) asked with c's headers.
func ListModels(ctx context.Context, c Config) ([]string, error) {
	client := c.oneClient()
	client.Timeout = 15 * time.Second
	defer client.CloseIdleConnections()
	url := strings.TrimSuffix(strings.TrimSuffix(c.Target, "/"), "/v1") + "/v1/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	session.ApplyHeader(req, c.Headers)
	req.Header.Set("anthropic-version", "2023-06-01")
	red := NewRedactor([]http.Header{c.Headers}, []string{c.Target}, c.Redact)
	resp, err := client.Do(req)
	if err != nil {
		return nil, red.Error(fmt.Errorf("GET %s: %w", red.URL(url), err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, red.Error(fmt.Errorf("GET %s: %w", red.URL(url), err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d: %s", red.URL(url), resp.StatusCode, red.String(measure.Clip(string(bytes.TrimSpace(body)), 200)))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("GET %s: want {\"data\":[{\"id\":…}]}: %w", red.URL(url), err)
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
