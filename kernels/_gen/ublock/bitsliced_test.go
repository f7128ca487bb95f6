package main

import "testing"

// TestBitslicedModel runs the generator's checks of the bitsliced design:
// the S-box program on all 16 inputs, and the plane-level model of the
// whole cipher (both round counts) against the table-based reference.
func TestBitslicedModel(t *testing.T) {
	prog := bsSBoxProgram()
	if len(prog) != 4 {
		t.Fatalf("S-box program has %d steps, want 4", len(prog))
	}
	bsModel(prog)
}

// TestBitslicedModelCatchesErrors checks that the model check fails on a
// wrong S-box program.
func TestBitslicedModelCatchesErrors(t *testing.T) {
	prog := bsSBoxProgram()
	prog[len(prog)-1].imm ^= 1
	defer func() {
		if recover() == nil {
			t.Fatal("bsModel accepted a wrong S-box program")
		}
	}()
	bsModel(prog)
}
