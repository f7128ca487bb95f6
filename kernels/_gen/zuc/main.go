// Command zuc generates gmtun's ZUC kernels (package
// github.com/gmtun/gmtun/kernels/zuc):
//
//   - x16: 16 lanes (x16.go, x16_gen.go; the tails and the S-box hook in
//     x16_ring.go, the vector key loading in x16_load.go), generated twice
//     (x16Variant): AVX-512 F/BW/VL + VBMI + VBMI2 + GFNI (16AVX512: one
//     group of 16 lanes in ZMM registers, S0 as a 256-byte permute, S1 as
//     two GFNI affine instructions, the funnel shifts as VPSHLDD; and the
//     paired kernels, two such groups on two states), and, as
//     two interleaved groups of 8 in YMM registers, AVX-512 F/BW/VL/DQ +
//     AES-NI for Skylake-SP and Cascade Lake (16AESNI: S1 as VEX AESENCLAST
//     on XMM halves between two nibble-table affine maps, the funnel shifts
//     as shifts and VPTERNLOGD); the key loading, F/BW only, once;
//   - x8: AVX2 (VEX encoding, Y0–Y15 only), 8 lanes in YMM rows (x8.go),
//     generated twice with S1 as the parameter: two GFNI affine
//     instructions (8GFNI), or AESENCLAST between two nibble-table affine
//     maps for CPUs without GFNI (8AESNI);
//   - the carry-less-multiply MAC kernels behind 128-EIA3 and ZUC-256-MAC
//     (mac.go).
//
// Every lane is an independent ZUC instance (its own key, IV and constants),
// so the kernels serve ZUC-128 (GB/T 33133.1-2016, ETSI/SAGE 128-EEA3/EIA3
// Document 2) and ZUC-256 (ZUC design team, 2018) lanes alike. The lane state
// is a structure of arrays: row j of the LFSR holds cell s_j of every lane,
// followed by the R1 and R2 rows and 16 scratch rows for keystream words.
// All kernels share one constant table (consts.go).
//
// The Go reference for each step is the ZUC specification itself (§3.3 of
// GB/T 33133.1: LFSR, bit reorganization, nonlinear function F); the
// package tests compare every kernel with github.com/emmansun/gmsm/zuc and
// every S-box with the tables of the standard.
//
// Run (as make kernels does):
//
//	cd kernels/_gen && go run ./zuc -out ../zuc/zuc_amd64.s -stubs ../zuc/stubs_amd64.go -pkg zuc
package main

import (
	. "github.com/mmcloughlin/avo/build"
)

func main() {
	ConstraintExpr("amd64,gc,!purego")
	emitConsts()
	genX16(x16GFNI)
	for _, t := range []*tier{
		{lanes: 8, name: "8GFNI", s1: s1GFNI},
		{lanes: 8, name: "8AESNI", s1: s1AESNI},
	} {
		t.genInit()
		t.genRows()
		t.genKeyStream()
		t.genXOR()
		t.genSboxes()
	}
	for _, m := range []macKernel{
		{products: 2}, {products: 3},
		{products: 2, avx512: true}, {products: 3, avx512: true},
	} {
		m.gen()
	}
	for _, m := range []macKernel{{products: 2, avx512: true}, {products: 3, avx512: true}} {
		m.genLanes()
	}
	genX16(x16AESNI)
	Generate()
}
