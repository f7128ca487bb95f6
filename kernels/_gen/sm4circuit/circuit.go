package main

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// form is a GF(2)-linear combination of circuit atoms: bit k set means atom
// k is in the sum. Atoms 0..7 are the S-box input bits (bit 0 = least
// significant); atom 8+i is the output of the i-th AND gate.
type form uint64

type andGate struct{ a, b form }

// builder records the AND gates of a circuit while the tower-field
// arithmetic runs on symbolic bits; XORs stay symbolic (forms) until
// materialize turns them into gates.
type builder struct {
	t    tower
	ands []andGate
}

func (c *builder) and(a, b form) form {
	if a == 0 || b == 0 {
		return 0
	}
	if len(c.ands) >= 56 {
		panic("sm4circuit gen: too many AND gates for a 64-bit form")
	}
	c.ands = append(c.ands, andGate{a, b})
	return 1 << (8 + len(c.ands) - 1)
}

// applyLin applies the linear map f (given on integers of len(v) bits) to
// the symbolic bit vector v.
func applyLin(f func(byte) byte, v []form) []form {
	out := make([]form, len(v))
	for j := range v {
		col := f(1 << j)
		for i := range out {
			if col>>i&1 == 1 {
				out[i] ^= v[j]
			}
		}
	}
	return out
}

func xorv(a, b []form) []form {
	out := make([]form, len(a))
	for i := range a {
		out[i] = a[i] ^ b[i]
	}
	return out
}

// mul4 multiplies in GF(4) with Karatsuba: three ANDs.
func (c *builder) mul4(a, b []form) []form {
	p := c.and(a[1], b[1])
	q := c.and(a[0], b[0])
	r := c.and(a[1]^a[0], b[1]^b[0])
	return []form{p ^ q, r ^ q}
}

// mul16 multiplies in GF(16) with Karatsuba over GF(4): nine ANDs.
func (c *builder) mul16(a, b []form) []form {
	mu := c.t.mu
	p := c.mul4(a[2:], b[2:])
	q := c.mul4(a[:2], b[:2])
	r := c.mul4(xorv(a[2:], a[:2]), xorv(b[2:], b[:2]))
	lo := xorv(applyLin(func(x byte) byte { return mul4(x, mu) }, p), q)
	hi := xorv(r, q)
	return append(lo, hi...)
}

// inv16 inverts in GF(16): Δ = μc1² + c1c0 + c0², Δ⁻¹ = Δ² in GF(4),
// result (c1Δ⁻¹)Z + (c1+c0)Δ⁻¹. Nine ANDs.
func (c *builder) inv16(a []form) []form {
	sq := func(x byte) byte { return mul4(x, x) }
	c1, c0 := a[2:], a[:2]
	delta := xorv(xorv(applyLin(func(x byte) byte { return mul4(sq(x), c.t.mu) }, c1), c.mul4(c1, c0)), applyLin(sq, c0))
	dinv := applyLin(sq, delta)
	hi := c.mul4(c1, dinv)
	lo := c.mul4(xorv(c1, c0), dinv)
	return append(lo, hi...)
}

// inv256 inverts in the tower field: Δ = νh² + hl + l², result
// (hΔ⁻¹)Y + (h+l)Δ⁻¹. 36 ANDs.
func (c *builder) inv256(x []form) []form {
	h, l := x[4:], x[:4]
	sq := func(v byte) byte { return c.t.mul16(v, v) }
	delta := xorv(xorv(applyLin(func(v byte) byte { return c.t.mul16(sq(v), c.t.nu) }, h), c.mul16(h, l)), applyLin(sq, l))
	dinv := c.inv16(delta)
	hi := c.mul16(h, dinv)
	lo := c.mul16(xorv(h, l), dinv)
	return append(lo, hi...)
}

// symbolicSBox returns the AND gates, the eight inversion output forms y
// and the eight output forms of s0(x) = out(inv_T(in(x))).
func symbolicSBox(sf sboxForm) (*builder, []form, []form) {
	c := &builder{t: sf.t}
	x := make([]form, 8)
	for i := range x {
		x[i] = 1 << i
	}
	y := c.inv256(applyLin(sf.in.apply, x))
	return c, y, applyLin(sf.out.apply, y)
}

// Straight-line program over wires: wires 0..7 are the inputs, every op
// defines the next wire.
type opKind int

const (
	opXor opKind = iota
	opAnd
)

type op struct {
	kind opKind
	a, b int // operand wires
}

type program struct {
	ops  []op
	outs [8]int // wire holding output bit i
}

func (p *program) wires() int { return 8 + len(p.ops) }

// counts returns the number of XOR and AND gates.
func (p *program) counts() (xors, ands int) {
	for _, o := range p.ops {
		if o.kind == opXor {
			xors++
		} else {
			ands++
		}
	}
	return
}

// eval runs the program on 64 S-box inputs at once (one per bit lane of
// the uint64 words): in[i] holds input bit i of every lane.
func (p *program) eval(in [8]uint64) [8]uint64 {
	w := make([]uint64, p.wires())
	copy(w, in[:])
	for i, o := range p.ops {
		if o.kind == opXor {
			w[8+i] = w[o.a] ^ w[o.b]
		} else {
			w[8+i] = w[o.a] & w[o.b]
		}
	}
	var out [8]uint64
	for i, k := range p.outs {
		out[i] = w[k]
	}
	return out
}

// materializer turns forms into XOR gates, reusing any wire already built
// for the same form, and choosing shared subexpressions with Paar's greedy
// heuristic (most frequent pair first, ties broken at random; the best of
// several runs is kept).
type materializer struct {
	p      *program
	atomW  []int        // atom → wire
	byForm map[form]int // form → wire
	rng    *rand.Rand
	trials int
}

func (m *materializer) emit(o op, f form) int {
	m.p.ops = append(m.p.ops, o)
	w := 8 + len(m.p.ops) - 1
	if _, ok := m.byForm[f]; !ok {
		m.byForm[f] = w
	}
	return w
}

// paar runs one greedy pass: targets are rows over the columns cols (rows
// given as bit sets over column indices); it returns the column pairs to
// XOR, in order, and how many of them need a new gate.
func (m *materializer) paar(cols []form, rows []uint64) (pairs [][2]int, cost int) {
	cols = append([]form(nil), cols...)
	rows = append([]uint64(nil), rows...)
	type cand struct{ i, j int }
	var ties []cand
	for {
		best := 0
		ties = ties[:0]
		for i := range cols {
			for j := i + 1; j < len(cols); j++ {
				n := 0
				mask := uint64(1)<<i | uint64(1)<<j
				for _, r := range rows {
					if r&mask == mask && bits.OnesCount64(r) > 1 {
						n++
					}
				}
				if n == 0 {
					continue
				}
				if n > best {
					best = n
					ties = append(ties[:0], cand{i, j})
				} else if n == best {
					ties = append(ties, cand{i, j})
				}
			}
		}
		if best == 0 {
			return pairs, cost
		}
		c := ties[m.rng.IntN(len(ties))]
		if len(cols) >= 64 {
			panic("sm4circuit gen: too many columns")
		}
		f := cols[c.i] ^ cols[c.j]
		if _, ok := m.byForm[f]; !ok {
			cost++
		}
		pairs = append(pairs, [2]int{c.i, c.j})
		cols = append(cols, f)
		mask := uint64(1)<<c.i | uint64(1)<<c.j
		for k, r := range rows {
			if r&mask == mask {
				rows[k] = r&^mask | 1<<(len(cols)-1)
			}
		}
	}
}

// build makes sure every target form has a wire. basis lists existing
// wires' forms to express the targets over (nil: the atoms); the targets
// must lie in its span.
func (m *materializer) build(targets []form, basis []form) {
	var need []form
	seen := map[form]bool{}
	for _, t := range targets {
		if _, ok := m.byForm[t]; ok || seen[t] || t == 0 {
			continue
		}
		seen[t] = true
		need = append(need, t)
	}
	if len(need) == 0 {
		return
	}
	if basis == nil {
		var all form
		for _, t := range need {
			all |= t
		}
		for k := 0; k < 64; k++ {
			if all>>k&1 == 1 {
				basis = append(basis, 1<<k)
			}
		}
	}
	rows := make([]uint64, len(need))
	for r, t := range need {
		rows[r] = solve(basis, t)
	}
	var bestPairs [][2]int
	bestCost := -1
	for range m.trials {
		pairs, cost := m.paar(basis, rows)
		if bestCost < 0 || cost < bestCost {
			bestPairs, bestCost = pairs, cost
		}
	}
	cols := append([]form(nil), basis...)
	for _, c := range bestPairs {
		f := cols[c[0]] ^ cols[c[1]]
		if _, ok := m.byForm[f]; !ok {
			m.emit(op{opXor, m.byForm[cols[c[0]]], m.byForm[cols[c[1]]]}, f)
		}
		cols = append(cols, f)
	}
	for _, t := range need {
		if _, ok := m.byForm[t]; !ok {
			panic("sm4circuit gen: materializer lost a target")
		}
	}
}

// solve expresses t as a sum of basis forms (Gaussian elimination) and
// returns the set of basis indices used.
func solve(basis []form, t form) uint64 {
	type vec struct {
		f   form
		use uint64
	}
	var piv []vec
	for i, b := range basis {
		v := vec{b, 1 << i}
		for _, p := range piv {
			if v.f&(p.f&-p.f) != 0 {
				v.f ^= p.f
				v.use ^= p.use
			}
		}
		if v.f == 0 {
			panic("sm4circuit gen: dependent basis")
		}
		for k := range piv {
			if piv[k].f&(v.f&-v.f) != 0 {
				piv[k].f ^= v.f
				piv[k].use ^= v.use
			}
		}
		piv = append(piv, v)
	}
	var use uint64
	for _, p := range piv {
		if t&(p.f&-p.f) != 0 {
			t ^= p.f
			use ^= p.use
		}
	}
	if t != 0 {
		panic("sm4circuit gen: target outside the basis span")
	}
	return use
}

// compile turns the symbolic S-box into a program: AND gates grouped by
// depth, each group's operand forms materialized together, then the
// outputs, either directly over the atoms or (twoStage) through the eight
// inversion output bits y first.
func compile(c *builder, y, outs []form, twoStage bool, seed uint64, trials int) *program {
	p := &program{}
	m := &materializer{p: p, atomW: make([]int, 8+len(c.ands)), byForm: map[form]int{},
		rng: rand.New(rand.NewPCG(seed, 0x736d3462)), trials: trials}
	for i := 0; i < 8; i++ {
		m.atomW[i] = i
		m.byForm[1<<i] = i
	}
	depth := make([]int, 8+len(c.ands))
	fdepth := func(f form) int {
		d := 0
		for k := 0; k < 64; k++ {
			if f>>k&1 == 1 && depth[k] > d {
				d = depth[k]
			}
		}
		return d
	}
	maxD := 0
	for i, g := range c.ands {
		d := max(fdepth(g.a), fdepth(g.b)) + 1
		depth[8+i] = d
		maxD = max(maxD, d)
	}
	for d := 1; d <= maxD; d++ {
		var targets []form
		var idx []int
		for i, g := range c.ands {
			if depth[8+i] == d {
				targets = append(targets, g.a, g.b)
				idx = append(idx, i)
			}
		}
		m.build(targets, nil)
		for _, i := range idx {
			g := c.ands[i]
			w := m.emit(op{opAnd, m.byForm[g.a], m.byForm[g.b]}, 1<<(8+i))
			m.atomW[8+i] = w
		}
	}
	if twoStage {
		m.build(y, nil)
		m.build(outs, y)
	} else {
		m.build(outs, nil)
	}
	for i, f := range outs {
		p.outs[i] = m.byForm[f]
	}
	return p.pruned()
}

// pruned drops gates no output depends on and renumbers the wires.
func (p *program) pruned() *program {
	live := make([]bool, p.wires())
	for _, w := range p.outs {
		live[w] = true
	}
	for i := len(p.ops) - 1; i >= 0; i-- {
		if live[8+i] {
			live[p.ops[i].a] = true
			live[p.ops[i].b] = true
		}
	}
	q := &program{}
	ren := make([]int, p.wires())
	for i := 0; i < 8; i++ {
		ren[i] = i
	}
	for i, o := range p.ops {
		if live[8+i] {
			q.ops = append(q.ops, op{o.kind, ren[o.a], ren[o.b]})
			ren[8+i] = 8 + len(q.ops) - 1
		}
	}
	for i, w := range p.outs {
		q.outs[i] = ren[w]
	}
	return q
}

// sboxProgram derives every tower form of the S-box, compiles each
// circuit and keeps the one with the fewest gates, checking the program
// against τ on all 256 inputs. It panics on any mismatch. The search is
// deterministic (fixed seeds).
func sboxProgram() (sboxForm, *program) {
	type pick struct {
		sf       sboxForm
		twoStage bool
		n        int
	}
	best := pick{n: 1 << 30}
	for _, sf := range sboxForms() {
		c, y, outs := symbolicSBox(sf)
		for _, two := range []bool{false, true} {
			p := compile(c, y, outs, two, 1, 3)
			if n := len(p.ops); n < best.n {
				best = pick{sf, two, n}
			}
		}
	}
	// A longer search of the best form (more seeds and trials) may find a
	// shorter program still.
	c, y, outs := symbolicSBox(best.sf)
	var p *program
	for seed := uint64(2); seed < 10; seed++ {
		if q := compile(c, y, outs, best.twoStage, seed, 64); p == nil || len(q.ops) < len(p.ops) {
			p = q
		}
	}
	if err := checkProgram(p, best.sf); err != nil {
		panic(err)
	}
	return best.sf, p
}

// checkProgram evaluates p bitsliced on all 256 inputs (four 64-lane
// words) and compares τ(x) with out ⊕ e for input x ⊕ d.
func checkProgram(p *program, sf sboxForm) error {
	for base := 0; base < 256; base += 64 {
		var in [8]uint64
		for l := 0; l < 64; l++ {
			x := byte(base+l) ^ sf.d
			for i := 0; i < 8; i++ {
				in[i] |= uint64(x>>i&1) << l
			}
		}
		out := p.eval(in)
		for l := 0; l < 64; l++ {
			var y byte
			for i := 0; i < 8; i++ {
				y |= byte(out[i]>>l&1) << i
			}
			if y^sf.e != sm4SBox[base+l] {
				return fmt.Errorf("sm4circuit gen: circuit wrong at %#02x: %#02x, want %#02x", base+l, y^sf.e, sm4SBox[base+l])
			}
		}
	}
	return nil
}
