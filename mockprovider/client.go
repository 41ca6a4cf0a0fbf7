package mockprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// FetchSessions reads every session record the mock at baseURL holds; nil client means
// http.DefaultClient.
func FetchSessions(ctx context.Context, client *http.Client, baseURL string) ([]SessionRecord, error) {
	if client == nil {
		client = http.DefaultClient
	}
	u := strings.TrimSuffix(baseURL, "/") + PathSessions
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("mock sessions: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mock sessions: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("mock sessions: GET %s: HTTP %d", u, resp.StatusCode)
	}
	var body struct {
		Sessions []SessionRecord `json:"sessions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("mock sessions: GET %s: decode JSON: %w", u, err)
	}
	return body.Sessions, nil
}
