package zuc

import (
	"testing"
	"unsafe"

	"github.com/gmtun/gmtun/internal/cputime"
)

// placementPkt is the size of one sealed packet in the placement
// benchmarks: a 16-byte header, a 1420-byte body and a 16-byte tag (the
// stride of the in-place GRO receive layout).
const (
	placementBody = 1420
	placementPkt  = 16 + placementBody + 16
)

// placementLayouts returns the start of each of the Lanes packets of a
// batch for the buffer placements the tunnel and the benchmarks produce:
// every packet at the same offset of its own 64 KiB-aligned slab (pooled
// buffers of the tunnel: large allocations are page-aligned), staggered by
// 64·i or 256·i+16 bytes, contiguous at the GRO stride, and one Go
// allocation per packet (gmtun bench).
func placementLayouts() []struct {
	name string
	pkts [Lanes][]byte
} {
	const slab = 64 << 10
	aligned := func(n int) []byte {
		b := make([]byte, n+slab)
		skip := (slab - int(uintptr(unsafe.Pointer(&b[0]))%slab)) % slab
		return b[skip:][:n]
	}
	var out []struct {
		name string
		pkts [Lanes][]byte
	}
	add := func(name string, at func(i int) []byte) {
		var p [Lanes][]byte
		for i := range p {
			p[i] = at(i)[:placementPkt]
		}
		out = append(out, struct {
			name string
			pkts [Lanes][]byte
		}{name, p})
	}
	s := aligned(Lanes * slab)
	add("slab", func(i int) []byte { return s[i*slab:] })
	s64 := aligned(Lanes * slab)
	add("slab+64i", func(i int) []byte { return s64[i*slab+64*i:] })
	s256 := aligned(Lanes * slab)
	add("slab+256i+16", func(i int) []byte { return s256[i*slab+256*i+16:] })
	gro := aligned(Lanes * placementPkt)
	add("gro1452", func(i int) []byte { return gro[i*placementPkt:] })
	add("alloc", func(int) []byte { return make([]byte, placementPkt) })
	return out
}

// BenchmarkPlacement measures EncryptThenMAC128/256 of Lanes 1420-byte
// packets in place for each buffer placement of placementLayouts (CPU
// time, all packets counted).
func BenchmarkPlacement(b *testing.B) {
	var sc Scratch
	var k16, m16 [KeySize128]byte
	var k32, m32 [KeySize256]byte
	var eea, eia [Lanes][IVSize128]byte
	var ivs [Lanes][IVSize256]byte
	for i := range eea {
		eea[i][0], eia[i][0], ivs[i][0] = byte(i), byte(i+1), byte(i)
	}
	var tags [Lanes]uint32
	var tags256 [Lanes][MAC256TagSize]byte
	for _, l := range placementLayouts() {
		var bodies, msgs [Lanes][]byte
		for i, p := range l.pkts {
			msgs[i] = p[:16+placementBody]
			bodies[i] = p[16 : 16+placementBody]
		}
		b.Run("128/"+l.name, func(b *testing.B) {
			cputime.Loop(b, Lanes*placementBody, func() {
				sc.EncryptThenMAC128(&k16, &m16, &eea, &eia, &bodies, &msgs, &tags, Lanes)
			})
		})
		b.Run("256/"+l.name, func(b *testing.B) {
			cputime.Loop(b, Lanes*placementBody, func() {
				sc.EncryptThenMAC256(&k32, &m32, &ivs, &bodies, &msgs, &tags256, Lanes)
			})
		})
	}
}
