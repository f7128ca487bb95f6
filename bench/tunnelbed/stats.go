//go:build linux

package main

import (
	"math"
	"slices"
	"strconv"
)

// num is a measured value. NaN means "not measured" and is written to JSON
// as null (encoding/json rejects NaN).
type num float64

// MarshalJSON writes n as a JSON number, or null when it is NaN or infinite.
func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads a JSON number, or null as NaN.
func (n *num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = num(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*n = num(f)
	return nil
}

// summary is the spread of one metric over the runs of one tunnel.
type summary struct {
	N      int `json:"n"`
	Median num `json:"median"`
	Min    num `json:"min"`
	Max    num `json:"max"`
}

// summarize returns the median, minimum and maximum of xs, ignoring NaNs
// (a run in which the metric could not be measured). N is the number of
// values used; with N == 0 the other fields are NaN.
func summarize(xs []float64) summary {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		nan := num(math.NaN())
		return summary{Median: nan, Min: nan, Max: nan}
	}
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return summary{N: n, Median: num(med), Min: num(v[0]), Max: num(v[n-1])}
}

// ratio returns a/b, or NaN when either is missing or b is zero.
func ratio(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return math.NaN()
	}
	return a / b
}
