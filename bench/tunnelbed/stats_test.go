//go:build linux

package main

import (
	"encoding/json"
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name        string
		in          []float64
		n           int
		med, lo, hi float64
	}{
		{"odd", []float64{3, 1, 2}, 3, 2, 1, 3},
		{"even", []float64{4, 1, 3, 2}, 4, 2.5, 1, 4},
		{"one", []float64{7}, 1, 7, 7, 7},
		{"nan ignored", []float64{nan, 5, 1, nan, 3}, 3, 3, 1, 5},
	}
	for _, tt := range tests {
		s := summarize(tt.in)
		if s.N != tt.n || float64(s.Median) != tt.med || float64(s.Min) != tt.lo || float64(s.Max) != tt.hi {
			t.Errorf("%s: summarize(%v) = %+v, want n=%d median=%v min=%v max=%v", tt.name, tt.in, s, tt.n, tt.med, tt.lo, tt.hi)
		}
	}
	for _, in := range [][]float64{nil, {nan, nan}} {
		s := summarize(in)
		if s.N != 0 || !math.IsNaN(float64(s.Median)) || !math.IsNaN(float64(s.Min)) {
			t.Errorf("summarize(%v) = %+v, want empty", in, s)
		}
	}
	// The input must not be reordered.
	in := []float64{3, 1, 2}
	summarize(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("summarize modified its input: %v", in)
	}
}

func TestRatio(t *testing.T) {
	if r := ratio(3, 2); r != 1.5 {
		t.Errorf("ratio(3, 2) = %v", r)
	}
	for _, c := range [][2]float64{{1, 0}, {math.NaN(), 1}, {1, math.NaN()}} {
		if r := ratio(c[0], c[1]); !math.IsNaN(r) {
			t.Errorf("ratio(%v, %v) = %v, want NaN", c[0], c[1], r)
		}
	}
}

func TestNumJSON(t *testing.T) {
	b, err := json.Marshal([]num{1.5, num(math.NaN()), num(math.Inf(1)), 0})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "[1.5,null,null,0]" {
		t.Errorf("marshal = %s", b)
	}
	var back []num
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 4 || back[0] != 1.5 || !math.IsNaN(float64(back[1])) || back[3] != 0 {
		t.Errorf("unmarshal = %v", back)
	}
}
