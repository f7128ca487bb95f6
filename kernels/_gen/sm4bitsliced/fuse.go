package main

import "fmt"

// The AVX-512 kernels run the S-box program with VPTERNLOGD: fuse merges
// a gate into its one reader where the two together depend on at most
// three wires, so one ternary-logic instruction computes both.

// top is one op of a fused program: wire w is the boolean function tt of
// the 2 or 3 wires in; bit m of tt is the value when in[i] = m>>i&1.
type top struct {
	in []int
	tt uint8
	w  int
}

// tprogram is a program whose ops may have three inputs. Wires keep the
// numbering of the program it was fused from.
type tprogram struct {
	ops  []top
	outs [8]int
	nw   int
}

// evalTT is tt at the input bits v (v[i] = value of in[i]).
func evalTT(tt uint8, v []bool) bool {
	m := 0
	for i, b := range v {
		if b {
			m |= 1 << i
		}
	}
	return tt>>m&1 == 1
}

// fuse merges single-use gates that are not S-box outputs into their
// reader while the merged op has at most three inputs.
func fuse(p *program) *tprogram {
	uses := make([]int, p.wires())
	for _, o := range p.ops {
		uses[o.a]++
		uses[o.b]++
	}
	isOut := make([]bool, p.wires())
	for _, w := range p.outs {
		isOut[w] = true
	}
	nodes := make([]top, len(p.ops))
	dead := make([]bool, len(p.ops))
	for k, o := range p.ops {
		if o.a == o.b {
			panic("sm4bitsliced gen: gate with equal operands")
		}
		tt := uint8(0x6)
		if o.kind == opAnd {
			tt = 0x8
		}
		nodes[k] = top{in: []int{o.a, o.b}, tt: tt, w: 8 + k}
		for changed := true; changed; {
			changed = false
			for xi, x := range nodes[k].in {
				if x < 8 || uses[x] != 1 || isOut[x] || dead[x-8] {
					continue
				}
				pr := nodes[x-8]
				merged := append([]int(nil), pr.in...)
				for yi, y := range nodes[k].in {
					if yi == xi {
						continue
					}
					dup := false
					for _, z := range merged {
						dup = dup || z == y
					}
					if !dup {
						merged = append(merged, y)
					}
				}
				if len(merged) > 3 {
					continue
				}
				var ntt uint8
				for m := 0; m < 1<<len(merged); m++ {
					val := map[int]bool{}
					for i, w := range merged {
						val[w] = m>>i&1 == 1
					}
					pv := make([]bool, len(pr.in))
					for i, w := range pr.in {
						pv[i] = val[w]
					}
					val[x] = evalTT(pr.tt, pv)
					kv := make([]bool, len(nodes[k].in))
					for i, w := range nodes[k].in {
						kv[i] = val[w]
					}
					if evalTT(nodes[k].tt, kv) {
						ntt |= 1 << m
					}
				}
				nodes[k].in, nodes[k].tt = merged, ntt
				dead[x-8] = true
				changed = true
				break
			}
		}
	}
	tp := &tprogram{outs: p.outs, nw: p.wires()}
	for k := range nodes {
		if !dead[k] {
			tp.ops = append(tp.ops, nodes[k])
		}
	}
	return tp
}

// eval runs the fused program on 64 inputs at once, like program.eval.
func (p *tprogram) eval(in [8]uint64) [8]uint64 {
	w := make([]uint64, p.nw)
	copy(w, in[:])
	for _, o := range p.ops {
		var r uint64
		for m := 0; m < 1<<len(o.in); m++ {
			if o.tt>>m&1 == 0 {
				continue
			}
			t := ^uint64(0)
			for i, x := range o.in {
				if m>>i&1 == 1 {
					t &= w[x]
				} else {
					t &^= w[x]
				}
			}
			r |= t
		}
		w[o.w] = r
	}
	var out [8]uint64
	for i, k := range p.outs {
		out[i] = w[k]
	}
	return out
}

// counts returns the number of 3-input and 2-input ops.
func (p *tprogram) counts() (ternary, binary int) {
	for _, o := range p.ops {
		if len(o.in) == 3 {
			ternary++
		} else {
			binary++
		}
	}
	return
}

// checkCircuit evaluates c bitsliced on all 256 inputs (four 64-lane
// words) and compares τ(x) with out ⊕ e for input x ⊕ d.
func checkCircuit(c circuit, sf sboxForm) error {
	for base := 0; base < 256; base += 64 {
		var in [8]uint64
		for l := 0; l < 64; l++ {
			x := byte(base+l) ^ sf.d
			for i := 0; i < 8; i++ {
				in[i] |= uint64(x>>i&1) << l
			}
		}
		out := c.eval(in)
		for l := 0; l < 64; l++ {
			var y byte
			for i := 0; i < 8; i++ {
				y |= byte(out[i]>>l&1) << i
			}
			if y^sf.e != sm4SBox[base+l] {
				return fmt.Errorf("sm4bitsliced gen: circuit wrong at %#02x: %#02x, want %#02x", base+l, y^sf.e, sm4SBox[base+l])
			}
		}
	}
	return nil
}

// circuit is an S-box program, plain or fused.
type circuit interface {
	eval(in [8]uint64) [8]uint64
}

// ternImm is the VPTERNLOGD immediate of f(a, b, c), where a is the
// destination (first) operand, b the second and c the third (register or
// memory): bit 4a+2b+c of the immediate is f(a, b, c).
func ternImm(f func(a, b, c bool) bool) uint8 {
	var imm uint8
	for i := 0; i < 8; i++ {
		if f(i&4 != 0, i&2 != 0, i&1 != 0) {
			imm |= 1 << i
		}
	}
	return imm
}
