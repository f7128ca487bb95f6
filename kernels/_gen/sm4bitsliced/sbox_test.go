package main

import "testing"

// TestSBoxProgram checks the compiled circuit against the S-box table on
// every input (sboxProgram panics on a mismatch; checkProgram is run again
// here so a failure is reported, not only panicked).
func TestSBoxProgram(t *testing.T) {
	sf, p := sboxProgram()
	if err := checkProgram(p, sf); err != nil {
		t.Fatal(err)
	}
	x, a := p.counts()
	t.Logf("tower %+v d=%#02x e=%#02x: %d XOR + %d AND = %d gates", sf.t, sf.d, sf.e, x, a, x+a)
	if a != 36 {
		t.Errorf("AND gates = %d, want 36 (tower inversion)", a)
	}
}

// TestSBoxProgramDetectsFault flips each gate kind in turn and expects the
// exhaustive check to notice, so the check is not vacuous.
func TestSBoxProgramDetectsFault(t *testing.T) {
	sf, p := sboxProgram()
	for i := range p.ops {
		q := &program{ops: append([]op(nil), p.ops...), outs: p.outs}
		q.ops[i].kind ^= 1
		if checkProgram(q, sf) == nil {
			t.Errorf("flipping gate %d went unnoticed", i)
		}
	}
}

// TestFusedProgram checks the VPTERNLOGD form of the circuit on every
// input and in the whole plane model, and that it is shorter.
func TestFusedProgram(t *testing.T) {
	sf, p := sboxProgram()
	tp := fuse(p)
	if err := checkCircuit(tp, sf); err != nil {
		t.Fatal(err)
	}
	checkModel(sf, tp)
	t3, t2 := tp.counts()
	t.Logf("fused: %d ops (%d ternary, %d binary) from %d gates", t3+t2, t3, t2, len(p.ops))
	if t3+t2 >= len(p.ops) || t3 == 0 {
		t.Errorf("fusion did not shorten the program: %d ops from %d", t3+t2, len(p.ops))
	}
}

// TestFusedProgramDetectsFault flips each truth-table bit of each fused op
// whose input combination occurs on some S-box input and expects the
// exhaustive check to notice.
func TestFusedProgramDetectsFault(t *testing.T) {
	sf, p := sboxProgram()
	tp := fuse(p)
	reach := reachable(tp)
	for i, o := range tp.ops {
		for m := 0; m < 1<<len(o.in); m++ {
			if !reach[i][m] {
				continue // a combination the circuit never feeds this op
			}
			q := &tprogram{ops: append([]top(nil), tp.ops...), outs: tp.outs, nw: tp.nw}
			q.ops[i].tt ^= 1 << m
			if checkCircuit(q, sf) == nil {
				t.Errorf("flipping bit %d of op %d went unnoticed", m, i)
			}
		}
	}
}

// TestTernImm checks the VPTERNLOGD immediates against the instruction's
// definition (bit 4a+2b+c): XOR3 is 0x96, majority 0xe8.
func TestTernImm(t *testing.T) {
	if immXor3 != 0x96 || immMaj != 0xe8 {
		t.Errorf("immXor3 = %#x, immMaj = %#x, want 0x96, 0xe8", immXor3, immMaj)
	}
	if got := ternImm(func(a, b, c bool) bool { return a }); got != 0xf0 {
		t.Errorf("ternImm(a) = %#x, want 0xf0", got)
	}
	if got := ternImm(func(a, b, c bool) bool { return c }); got != 0xaa {
		t.Errorf("ternImm(c) = %#x, want 0xaa", got)
	}
}

// reachable reports per op which input combinations m occur over all 256
// S-box inputs.
func reachable(tp *tprogram) [][8]bool {
	r := make([][8]bool, len(tp.ops))
	w := make([]bool, tp.nw)
	for x := 0; x < 256; x++ {
		for i := 0; i < 8; i++ {
			w[i] = x>>i&1 == 1
		}
		for k, o := range tp.ops {
			v := make([]bool, len(o.in))
			m := 0
			for i, in := range o.in {
				v[i] = w[in]
				if w[in] {
					m |= 1 << i
				}
			}
			r[k][m] = true
			w[o.w] = evalTT(o.tt, v)
		}
	}
	return r
}
