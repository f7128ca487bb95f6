package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var zmm = [32]VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
	Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}

// zEmitter emits one fused S-box program on the 32 ZMM registers, with
// the same Belady allocation as sboxEmitter: 2-input XOR and AND become
// non-destructive VPXORD/VPANDD, every other op a VPTERNLOGD whose
// destination is an operand that dies there (or a copy of one). At most
// one operand is read from memory (the third).
type zEmitter struct {
	p      *tprogram
	spill  func(slot int) Mem
	nSlots int
	uses   [][]int
	loads  int
	stores int
	copies int
	dry    bool
}

func newZEmitter(p *tprogram, spill func(int) Mem, nSlots int) *zEmitter {
	e := &zEmitter{p: p, spill: spill, nSlots: nSlots, uses: make([][]int, p.nw)}
	for i, o := range p.ops {
		for _, x := range o.in {
			e.uses[x] = append(e.uses[x], i)
		}
	}
	return e
}

type zAlloc struct {
	e      *zEmitter
	regOf  []int
	memOf  []Mem
	inMem  []bool
	holder [32]int
	slotBy []int
}

func (s *zAlloc) nextUse(w, pos int) int {
	for _, u := range s.e.uses[w] {
		if u >= pos {
			return u
		}
	}
	return 1 << 30
}

func (s *zAlloc) isReg(w int) bool { return s.regOf[w] >= 0 }

func (s *zAlloc) assign(w, r int) { s.regOf[w], s.holder[r] = r, w }

func (s *zAlloc) release(w, pos int) {
	if s.nextUse(w, pos) == 1<<30 && s.regOf[w] >= 0 {
		s.holder[s.regOf[w]] = -1
		s.regOf[w] = -1
	}
}

// free returns a free register, evicting (and spilling) the value used
// farthest ahead if none is; keep lists registers that must stay.
func (s *zAlloc) free(pos int, keep ...int) int {
	for r := 0; r < 32; r++ {
		if s.holder[r] < 0 {
			return r
		}
	}
	victim, far := -1, -1
	for r := 0; r < 32; r++ {
		skip := false
		for _, k := range keep {
			skip = skip || k == r
		}
		if !skip {
			if n := s.nextUse(s.holder[r], pos); n > far {
				victim, far = r, n
			}
		}
	}
	w := s.holder[victim]
	if far < 1<<30 && !s.inMem[w] {
		slot := -1
		for i, h := range s.slotBy {
			if h < 0 || s.nextUse(h, pos) == 1<<30 && !s.isReg(h) {
				slot = i
				break
			}
		}
		if slot < 0 {
			panic("sm4bitsliced gen: out of spill slots")
		}
		s.slotBy[slot] = w
		s.memOf[w], s.inMem[w] = s.e.spill(slot), true
		if !s.e.dry {
			VMOVDQU64(zmm[victim], s.memOf[w])
		}
		s.e.stores++
	}
	s.regOf[w] = -1
	s.holder[victim] = -1
	return victim
}

// regs lists the registers of the wires in ws that are in registers.
func (s *zAlloc) regs(ws []int) []int {
	var k []int
	for _, w := range ws {
		if s.isReg(w) {
			k = append(k, s.regOf[w])
		}
	}
	return k
}

// emit runs the program: input(i, y, tmp) computes input plane i into y
// (tmp is scratch); out(i) is the memory home of output i.
func (e *zEmitter) emit(input func(i int, y, tmp VecPhysical), out func(i int) Mem) {
	p := e.p
	s := &zAlloc{e: e, regOf: make([]int, p.nw), memOf: make([]Mem, p.nw),
		inMem: make([]bool, p.nw), slotBy: make([]int, e.nSlots)}
	for i := range s.regOf {
		s.regOf[i] = -1
	}
	for i := range s.holder {
		s.holder[i] = -1
	}
	for i := range s.slotBy {
		s.slotBy[i] = -1
	}
	isOut := make(map[int][]int)
	for i, w := range p.outs {
		isOut[w] = append(isOut[w], i)
	}
	for i := 0; i < 8; i++ {
		r := s.free(0)
		s.assign(i, r)
		t := s.free(0)
		if !e.dry {
			input(i, zmm[r], zmm[t])
		}
	}
	for k, o := range p.ops {
		in := o.in
		// All but one operand must be in registers.
		var mem []int
		for _, x := range in {
			if !s.isReg(x) {
				mem = append(mem, x)
			}
		}
		for len(mem) > 1 {
			x := mem[0]
			mem = mem[1:]
			r := s.free(k, s.regs(in)...)
			if !e.dry {
				VMOVDQU64(s.memOf[x], zmm[r])
			}
			e.loads++
			s.assign(x, r)
		}
		opnd := func(x int) Op {
			if s.isReg(x) {
				return zmm[s.regOf[x]]
			}
			return s.memOf[x]
		}
		var d int
		if len(in) == 2 && (o.tt == 0x6 || o.tt == 0x8) {
			a, b := in[0], in[1]
			if !s.isReg(a) {
				a, b = b, a
			}
			ra, src2 := s.regOf[a], opnd(b)
			s.release(a, k+1)
			s.release(b, k+1)
			d = s.free(k, s.regs(in)...)
			switch {
			case e.dry:
			case o.tt == 0x6:
				VPXORD(src2, zmm[ra], zmm[d])
			default:
				VPANDD(src2, zmm[ra], zmm[d])
			}
		} else {
			// Slots: A (destination), B, C (register or memory).
			var c int
			if len(mem) == 1 {
				c = mem[0]
			} else {
				// Prefer an operand that lives on as C, so a dying one
				// can be the destination.
				c = in[len(in)-1]
				for _, x := range in {
					if s.nextUse(x, k+1) < 1<<30 {
						c = x
					}
				}
			}
			var rest []int
			for _, x := range in {
				if x != c {
					rest = append(rest, x)
				}
			}
			a := rest[0]
			for _, x := range rest {
				if s.nextUse(x, k+1) == 1<<30 {
					a = x
				}
			}
			b := a
			for _, x := range rest {
				if x != a {
					b = x
				}
			}
			srcC, rb := opnd(c), s.regOf[b]
			if s.nextUse(a, k+1) == 1<<30 {
				d = s.regOf[a]
				s.holder[d], s.regOf[a] = -1, -1
			} else {
				d = s.free(k, s.regs(in)...)
				if !e.dry {
					VMOVDQA64(zmm[s.regOf[a]], zmm[d])
				}
				e.copies++
			}
			if b == a {
				rb = d
			}
			imm := ternImm(func(va, vb, vc bool) bool {
				v := make([]bool, len(in))
				for i, x := range in {
					switch x {
					case a:
						v[i] = va
					case b:
						v[i] = vb
					default:
						v[i] = vc
					}
				}
				return evalTT(o.tt, v)
			})
			if !e.dry {
				VPTERNLOGD(U8(imm), srcC, zmm[rb], zmm[d])
			}
			for _, x := range in {
				if x != a {
					s.release(x, k+1)
				}
			}
		}
		s.assign(o.w, d)
		for _, i := range isOut[o.w] {
			if !e.dry {
				VMOVDQU64(zmm[d], out(i))
			}
			s.memOf[o.w], s.inMem[o.w] = out(i), true
		}
		s.release(o.w, k+1)
	}
}

func (e *zEmitter) String() string {
	return fmt.Sprintf("%d ops (%d copies), %d spill stores, %d reloads", len(e.p.ops)+e.copies, e.copies, e.stores, e.loads)
}
