package scenarios

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// z99 is the standard normal quantile at 0.99: a lognormal's sigma is ln(p99/median)/z99.
const z99 = 2.3263478740408408

// Constant returns a Dist that always samples d.
func Constant(d time.Duration) Dist { return Dist{Kind: DistConstant, Value: d} }

// Sample draws one duration (never negative) from r; an empty Kind is constant, and normal and
// lognormal samples are clamped to [Min, Max] where set.
func (d Dist) Sample(r *rand.Rand) time.Duration {
	var v time.Duration
	switch d.Kind {
	case DistUniform:
		if d.Max <= d.Min {
			v = d.Min
		} else {
			v = d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)+1))
		}
	case DistNormal:
		v = d.Mean + time.Duration(r.NormFloat64()*float64(d.Stddev))
		v = d.clamp(v)
	case DistLognormal:
		if d.Median <= 0 {
			return 0
		}
		f := math.Exp(math.Log(float64(d.Median)) + d.sigma()*r.NormFloat64())
		v = d.clamp(time.Duration(min(f, math.MaxInt64/2)))
	default:
		v = d.Value
	}
	return max(v, 0)
}

// sigma is a lognormal's sigma, from its median and p99 (0 when p99 <= median).
func (d Dist) sigma() float64 {
	if d.P99 <= d.Median {
		return 0
	}
	return math.Log(float64(d.P99)/float64(d.Median)) / z99
}

// clamp bounds v to [Min, Max] where they are set (Max > 0).
func (d Dist) clamp(v time.Duration) time.Duration {
	v = max(v, d.Min)
	if d.Max > 0 {
		v = min(v, d.Max)
	}
	return v
}

// Expectation estimates the distribution's expected value, for duration estimates in `scenarios show`.
func (d Dist) Expectation() time.Duration {
	switch d.Kind {
	case DistUniform:
		return (d.Min + d.Max) / 2
	case DistNormal:
		return max(d.Mean, 0)
	case DistLognormal:
		if d.Median <= 0 {
			return 0
		}
		sigma := d.sigma()
		return time.Duration(float64(d.Median) * math.Exp(sigma*sigma/2))
	default:
		return d.Value
	}
}

// String describes the distribution compactly, e.g. "lognormal(median=300ms p99=1.2s)".
func (d Dist) String() string {
	switch d.Kind {
	case DistUniform:
		return fmt.Sprintf("uniform(%v..%v)", d.Min, d.Max)
	case DistNormal:
		return fmt.Sprintf("normal(mean=%v stddev=%v)", d.Mean, d.Stddev)
	case DistLognormal:
		return fmt.Sprintf("lognormal(median=%v p99=%v)", d.Median, d.P99)
	default:
		return d.Value.String()
	}
}

// validate checks the fields the kind uses and rejects fields it ignores, so a typo such as
// `kind: uniform, median: 3ms` is reported rather than silently sampling 0.
func (d Dist) validate(errs *fieldErrors, path string) {
	bad := func(field, format string, args ...any) { errs.add(path+"."+field, format, args...) }
	type field struct {
		name  string
		value time.Duration
	}
	fields := []field{{"value", d.Value}, {"min", d.Min}, {"max", d.Max}, {"mean", d.Mean}, {"stddev", d.Stddev}, {"median", d.Median}, {"p99", d.P99}}
	for _, f := range fields {
		if f.value < 0 {
			bad(f.name, "negative duration %v; expected >= 0", f.value)
		}
	}
	kind := cmp.Or(d.Kind, DistConstant)
	used := map[DistKind]string{
		DistConstant:  " value ",
		DistUniform:   " min max ",
		DistNormal:    " mean stddev min max ",
		DistLognormal: " median p99 min max ",
	}[kind]
	switch kind {
	case DistConstant:
	case DistUniform:
		if d.Min > d.Max {
			bad("max", "uniform max %v is below min %v; expected min <= max", d.Max, d.Min)
		}
	case DistNormal, DistLognormal:
		if kind == DistLognormal && d.Median <= 0 {
			bad("median", "lognormal needs median > 0")
		} else if kind == DistLognormal && d.P99 < d.Median {
			bad("p99", "lognormal p99 %v is below median %v; expected 0 < median <= p99", d.P99, d.Median)
		}
		if d.Max > 0 && d.Min > d.Max {
			bad("max", "%s max %v is below min %v; expected min <= max", kind, d.Max, d.Min)
		}
	default:
		bad("kind", "unknown distribution %q; expected constant, uniform, normal or lognormal", d.Kind)
		return
	}
	for _, f := range fields {
		if f.value != 0 && !strings.Contains(used, " "+f.name+" ") {
			bad(f.name, "not used by a %s distribution (it uses:%s)", kind, strings.TrimRight(used, " "))
		}
	}
}
