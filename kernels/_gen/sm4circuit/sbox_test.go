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
