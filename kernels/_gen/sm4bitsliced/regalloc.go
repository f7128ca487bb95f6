package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// sboxEmitter emits one S-box program on 16 YMM registers: 8 input planes
// (computed by the caller's input function into registers) go in, 8 output
// planes are stored to memory. Registers are assigned by Belady's rule:
// when none is free, the value whose next use is farthest is evicted,
// spilled to a stack slot first if memory holds no copy. XOR and AND are
// commutative, so an operand already in a register is always taken as the
// first source and the other may be a memory operand.
type sboxEmitter struct {
	p      *program
	spill  func(slot int) Mem // spill slot address
	nSlots int                // slots available
	uses   [][]int            // wire → positions (op indices) that read it
	loads  int                // statistics: spill stores + reloads
	stores int
	dry    bool // count only, emit nothing
}

func newSBoxEmitter(p *program, spill func(int) Mem, nSlots int) *sboxEmitter {
	e := &sboxEmitter{p: p, spill: spill, nSlots: nSlots, uses: make([][]int, p.wires())}
	for i, o := range p.ops {
		e.uses[o.a] = append(e.uses[o.a], i)
		e.uses[o.b] = append(e.uses[o.b], i)
	}
	return e
}

type allocState struct {
	e      *sboxEmitter
	regOf  []int  // wire → register number or -1
	memOf  []Mem  // wire → memory copy
	inMem  []bool // memOf valid
	holder [16]int
	slotBy []int // slot → wire or -1
}

var ymm = [16]VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}

// nextUse is the first use of w at or after position pos, or a large
// number if none.
func (s *allocState) nextUse(w, pos int) int {
	for _, u := range s.e.uses[w] {
		if u >= pos {
			return u
		}
	}
	return 1 << 30
}

// free returns a free register, evicting if needed; keep lists registers
// that must not be evicted.
func (s *allocState) free(pos int, keep ...int) int {
	for r := 0; r < 16; r++ {
		if s.holder[r] < 0 {
			return r
		}
	}
	victim, far := -1, -1
	for r := 0; r < 16; r++ {
		skip := false
		for _, k := range keep {
			skip = skip || k == r
		}
		if skip {
			continue
		}
		if n := s.nextUse(s.holder[r], pos); n > far {
			victim, far = r, n
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
			VMOVDQU(ymm[victim], s.memOf[w])
		}
		s.e.stores++
	}
	s.regOf[w] = -1
	s.holder[victim] = -1
	return victim
}

func (s *allocState) isReg(w int) bool { return s.regOf[w] >= 0 }

func (s *allocState) assign(w, r int) {
	s.regOf[w] = r
	s.holder[r] = w
}

// release frees the register of w if w has no use at or after pos.
func (s *allocState) release(w, pos int) {
	if s.nextUse(w, pos) == 1<<30 && s.regOf[w] >= 0 {
		s.holder[s.regOf[w]] = -1
		s.regOf[w] = -1
	}
}

// emit runs the program. input(i, y) must compute input plane i into y
// using only y and tmp; out(i) is the memory home of output i.
func (e *sboxEmitter) emit(input func(i int, y, tmp VecPhysical), out func(i int) Mem) {
	p := e.p
	s := &allocState{e: e, regOf: make([]int, p.wires()), memOf: make([]Mem, p.wires()),
		inMem: make([]bool, p.wires()), slotBy: make([]int, e.nSlots)}
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
		if len(isOut[i]) > 0 {
			panic("sm4bitsliced gen: S-box output equals an input")
		}
		r := s.free(0)
		s.assign(i, r)
		t := s.free(0)
		if !e.dry {
			input(i, ymm[r], ymm[t])
		}
	}
	for k, o := range p.ops {
		w := 8 + k
		a, b := o.a, o.b
		if !s.isReg(a) && s.isReg(b) {
			a, b = b, a
		}
		if !s.isReg(a) {
			r := s.free(k, regsOf(s, b)...)
			if !e.dry {
				VMOVDQU(s.memOf[a], ymm[r])
			}
			e.loads++
			s.assign(a, r)
		}
		ra := s.regOf[a]
		var src2 Op
		if s.isReg(b) {
			src2 = ymm[s.regOf[b]]
		} else {
			src2 = s.memOf[b]
		}
		rb := s.regOf[b]
		// Operands dying here free their registers for the result.
		s.release(a, k+1)
		if a != b {
			s.release(b, k+1)
		}
		d := s.free(k, keepLive(s, ra, a, rb, b)...)
		switch {
		case e.dry:
		case o.kind == opXor:
			VPXOR(src2, ymm[ra], ymm[d])
		default:
			VPAND(src2, ymm[ra], ymm[d])
		}
		s.assign(w, d)
		for _, i := range isOut[w] {
			if !e.dry {
				VMOVDQU(ymm[d], out(i))
			}
			s.memOf[w], s.inMem[w] = out(i), true
		}
		s.release(w, k+1)
	}
}

func regsOf(s *allocState, w int) []int {
	if s.isReg(w) {
		return []int{s.regOf[w]}
	}
	return nil
}

// keepLive lists operand registers still holding live values (they must
// not be chosen as the destination).
func keepLive(s *allocState, ra, a, rb, b int) []int {
	var k []int
	if s.regOf[a] == ra && ra >= 0 {
		k = append(k, ra)
	}
	if rb >= 0 && s.regOf[b] == rb {
		k = append(k, rb)
	}
	return k
}

// spillCost is the number of spill stores and reloads the program needs
// (a dry run of emit).
func spillCost(p *program) int {
	e := newSBoxEmitter(p, func(i int) Mem { return Mem{Disp: 32 * i} }, spillSlots)
	e.dry = true
	e.emit(nil, func(int) Mem { return Mem{} })
	return e.stores + e.loads
}

func (e *sboxEmitter) String() string {
	return fmt.Sprintf("%d spill stores, %d reloads", e.stores, e.loads)
}
