package measure

// EngineMetrics are an inference engine's gauges read from its Prometheus endpoint while the
// load ran (load --engine-metrics), beside the run's own latencies over time.
type EngineMetrics struct {
	URL        string         `json:"url"`
	IntervalMs int64          `json:"interval_ms"` // between two points; doubles as points are thinned
	Scrapes    int            `json:"scrapes"`
	Failed     int            `json:"failed"`
	LastError  string         `json:"last_error,omitempty"`
	Series     []EngineSeries `json:"series"` // the known gauges found, in EngineGauges order
}

// EngineSeries is one gauge over the run, summed (counts) or averaged (fractions) over its
// label sets.
type EngineSeries struct {
	Name   string        `json:"name"`
	Doc    string        `json:"doc"`
	Points []EnginePoint `json:"points"`
}

// EnginePoint is a gauge's value at Ms since the run started.
type EnginePoint struct {
	Ms    int64   `json:"ms"`
	Value float64 `json:"value"`
}

// EngineGauge is a gauge an engine names: Fraction when a 0-1 share, averaged over label sets (a count is summed).
type EngineGauge struct {
	Name, Doc string
	Fraction  bool
}

// EngineGauges are the gauges kept: vLLM's (v0 and v1), SGLang's and TGI's.
var EngineGauges = []EngineGauge{
	{Name: "vllm:num_requests_running", Doc: "vLLM requests running"},
	{Name: "vllm:num_requests_waiting", Doc: "vLLM requests waiting"},
	{Name: "vllm:kv_cache_usage_perc", Doc: "vLLM KV cache usage (0-1)", Fraction: true},
	{Name: "vllm:gpu_cache_usage_perc", Doc: "vLLM GPU KV cache usage (0-1)", Fraction: true},
	{Name: "sglang:num_running_reqs", Doc: "SGLang requests running"},
	{Name: "sglang:num_queue_reqs", Doc: "SGLang requests queued"},
	{Name: "sglang:token_usage", Doc: "SGLang KV token usage (0-1)", Fraction: true},
	{Name: "sglang:cache_hit_rate", Doc: "SGLang prefix cache hit rate (0-1)", Fraction: true},
	{Name: "tgi_queue_size", Doc: "TGI requests queued"},
	{Name: "tgi_batch_current_size", Doc: "TGI batch size"},
}

// Fraction tells whether the series is a 0-1 share rather than a count.
func (s EngineSeries) Fraction() bool {
	for _, g := range EngineGauges {
		if g.Name == s.Name {
			return g.Fraction
		}
	}
	return false
}
