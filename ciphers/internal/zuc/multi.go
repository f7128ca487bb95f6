package zuc

import (
	"encoding/binary"
	"math/bits"
)

// The portable core's batch path: up to multiLanes ZUC states run in
// lockstep, so that one evaluation of the S-box circuits (sboxLayer8, on
// 64-bit bit planes) serves the S-box inputs of all of them. A circuit
// costs the same for one lane as for eight, so the batch primitives'
// generic loops take their lanes eight at a time; a lone lane runs on
// State, whose single-lane circuit is cheaper; only the k lanes in use
// are computed outside the circuit. Like State, it has no table and no
// secret-dependent branch or address.

// multiLanes is the number of states a multiState runs in lockstep.
const multiLanes = 8

// multiMin is the fewest running lanes for which the lockstep core is
// faster than as many single-lane States (a lockstep round of k lanes
// costs about 1.9 single-lane rounds for k = 2, 2.1 for 4, 2.7 for 8, on
// the Xeon of BENCHMARKS.md): a lone lane runs on a State from the
// start, and the last lane still running when the others have finished
// continues on a State taken from the lockstep state.
const multiMin = 2

// multiMACWords bounds the keystream words per lane a lockstep MAC
// generates into its stack buffer (messages up to about 2 KiB); longer
// messages are authenticated on a State.
const multiMACWords = 512

// multiState holds multiLanes ZUC states, cell i of lane j in
// s[(t+i)&15][j]: the LFSR is a ring, so a round writes one row instead of
// shifting sixteen.
type multiState struct {
	s      [16][multiLanes]uint32
	r1, r2 [multiLanes]uint32
	t      int
	k      int // lanes 0..k-1 are in use; the others are not computed
}

// set loads lane j from st (a state loaded but not yet initialised); t
// must still be 0.
func (m *multiState) set(j int, st *State) {
	for i := range st.s {
		m.s[i][j] = st.s[i]
	}
	m.r1[j], m.r2[j] = st.r1, st.r2
}

// round runs one round on every lane: initialisation mode (W>>1 fed into
// the LFSR, no output) if init, else working mode with keystream word z[j].
func (m *multiState) round(init bool, z *[multiLanes]uint32) {
	t := m.t
	s0, s2, s4, s5 := &m.s[t], &m.s[(t+2)&15], &m.s[(t+4)&15], &m.s[(t+5)&15]
	s7, s9, s10, s11 := &m.s[(t+7)&15], &m.s[(t+9)&15], &m.s[(t+10)&15], &m.s[(t+11)&15]
	s13, s14, s15 := &m.s[(t+13)&15], &m.s[(t+14)&15], &m.s[(t+15)&15]
	var in [multiLanes]uint64
	var w [multiLanes]uint32
	k := min(m.k, multiLanes)
	for j := range k {
		x0 := (s15[j]&0x7fff8000)<<1 | s14[j]&0xffff
		x1 := s11[j]<<16 | s9[j]>>15
		x2 := s7[j]<<16 | s5[j]>>15
		w[j] = (x0 ^ m.r1[j]) + m.r2[j]
		z[j] = w[j] ^ (s2[j]<<16 | s0[j]>>15)
		w1 := m.r1[j] + x1
		w2 := m.r2[j] ^ x2
		u := w1<<16 | w2>>16
		v := w2<<16 | w1>>16
		u ^= bits.RotateLeft32(u, 2) ^ bits.RotateLeft32(u, 10) ^ bits.RotateLeft32(u, 18) ^ bits.RotateLeft32(u, 24)
		v ^= bits.RotateLeft32(v, 8) ^ bits.RotateLeft32(v, 14) ^ bits.RotateLeft32(v, 22) ^ bits.RotateLeft32(v, 30)
		in[j] = uint64(u)<<32 | uint64(v)
	}
	sboxLayer8(&in)
	for j := range k {
		m.r1[j], m.r2[j] = uint32(in[j]>>32), uint32(in[j])
		f := uint64(s15[j])<<15 + uint64(s13[j])<<17 + uint64(s10[j])<<21 + uint64(s4[j])<<20 + uint64(s0[j])<<8 + uint64(s0[j])
		if init {
			f += uint64(w[j] >> 1)
		}
		f = f&0x7fffffff + f>>31
		s0[j] = uint32(f&0x7fffffff + f>>31) // cell 16 takes the ring slot of cell 0
	}
	m.t = (t + 1) & 15
}

// lane returns lane j's state as a State, to continue it single-lane.
func (m *multiState) lane(j int) (st State) {
	for i := range st.s {
		st.s[i] = m.s[(m.t+i)&15][j]
	}
	st.r1, st.r2 = m.r1[j], m.r2[j]
	return st
}

// init runs the initialisation stage on every lane: 32 initialisation
// rounds and the discarded first working round (GB/T 33133.1-2016 §6.1).
func (m *multiState) init() {
	enterCore()
	var z [multiLanes]uint32
	for range 32 {
		m.round(true, &z)
	}
	m.round(false, &z)
}

// block runs BlockWords working rounds; z[i][j] is word i of lane j.
func (m *multiState) block(z *[BlockWords][multiLanes]uint32) {
	for i := range z {
		m.round(false, &z[i])
	}
}

// laneGroups calls f with the lanes of active (bit c for lane c), at most
// multiLanes at a time, in increasing order.
func laneGroups(active uint32, f func(lanes []int)) {
	var g [multiLanes]int
	for active != 0 {
		n := 0
		for ; active != 0 && n < multiLanes; active &= active - 1 {
			g[n] = bits.TrailingZeros32(active)
			n++
		}
		f(g[:n])
	}
}

// multiXOR XORs the keystream of every lane c of active into bufs[c], in
// place, eight lanes at a time; load(st, c) loads lane c's key and IV.
func multiXOR(active uint32, bufs *[Lanes][]byte, load func(st *State, c int)) {
	laneGroups(active, func(lanes []int) {
		if len(lanes) < multiMin {
			for _, c := range lanes {
				var st State
				load(&st, c)
				st.finishInit()
				XORKeyStreamGeneric(&st, bufs[c], bufs[c])
			}
			return
		}
		m := multiState{k: len(lanes)}
		longest := 0
		for j, c := range lanes {
			var st State
			load(&st, c)
			m.set(j, &st)
			longest = max(longest, len(bufs[c]))
		}
		m.init()
		var z [BlockWords][multiLanes]uint32
		for at := 0; at < longest; at += BlockSize {
			if running(lanes, func(c int) bool { return at < len(bufs[c]) }) < multiMin {
				for j, c := range lanes {
					if at < len(bufs[c]) {
						st := m.lane(j)
						b := bufs[c][at:]
						XORKeyStreamGeneric(&st, b, b)
					}
				}
				return
			}
			m.block(&z)
			for j, c := range lanes {
				b := bufs[c]
				if at >= len(b) {
					continue
				}
				b = b[at:min(len(b), at+BlockSize)]
				for i := 0; len(b) > 0; i++ {
					if len(b) >= 4 {
						binary.BigEndian.PutUint32(b, binary.BigEndian.Uint32(b)^z[i][j])
						b = b[4:]
						continue
					}
					for k := range b {
						b[k] ^= byte(z[i][j] >> (24 - 8*uint(k)))
					}
					b = nil
				}
			}
		}
	})
}

// running counts the lanes for which more(c) holds.
func running(lanes []int, more func(c int) bool) (n int) {
	for _, c := range lanes {
		if more(c) {
			n++
		}
	}
	return n
}

// multiKeyWords generates words[c] ≤ multiMACWords keystream words for
// every lane c of active, eight lanes at a time (load as in multiXOR), and
// calls use(c, ks) with them once every lane of the group has its words.
func multiKeyWords(active uint32, words *[Lanes]int, load func(st *State, c int), use func(c int, ks []uint32)) {
	laneGroups(active, func(lanes []int) {
		var ks [multiLanes][multiMACWords]uint32
		if len(lanes) < multiMin {
			for j, c := range lanes {
				var st State
				load(&st, c)
				st.finishInit()
				st.KeyWords(ks[j][:words[c]])
				use(c, ks[j][:words[c]])
			}
			return
		}
		m := multiState{k: len(lanes)}
		longest := 0
		for j, c := range lanes {
			var st State
			load(&st, c)
			m.set(j, &st)
			longest = max(longest, words[c])
		}
		m.init()
		var z [BlockWords][multiLanes]uint32
		for at := 0; at < longest; at += BlockWords {
			if running(lanes, func(c int) bool { return at < words[c] }) < multiMin {
				for j, c := range lanes {
					if at < words[c] {
						st := m.lane(j)
						st.KeyWords(ks[j][at:words[c]])
					}
				}
				break
			}
			m.block(&z)
			for j := range lanes {
				for i := range z {
					ks[j][at+i] = z[i][j]
				}
			}
		}
		for j, c := range lanes {
			use(c, ks[j][:words[c]])
		}
	})
}
