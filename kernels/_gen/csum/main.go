// Command csum generates gmtun's AVX2 Internet-checksum kernels (RFC 1071):
// the running 64-bit sum of kernels/csum.Sum, and the same sum fused with
// the copy of the data (CopySum), in one pass over it.
//
// The RFC 1071 sum is taken modulo 2^16-1, and 2^32 ≡ 1 modulo 2^16-1, so
// the sum of the 32-bit halves of the data's little-endian 64-bit words is
// congruent to the sum of its 16-bit words. The kernels add each 64-bit
// lane word x twice per step, with no carries to track:
//
//	S += x        (modulo 2^64: the carries out of the lane are lost)
//	H += x >> 32  (exact: the high halves)
//
// and at the end recover the sum of the low halves exactly as
// L = S - H<<32 (modulo 2^64, which is exact while L < 2^64), so the lane
// contributes L + H. That is three vector operations per 32 bytes besides
// the load (VPSRLQ and two VPADDQ; CopySum adds the store), without the
// mask a zero-extension of the halves would take. Eight accumulators (four
// S, four H) over 128 bytes per iteration keep the adds independent.
//
// Bounds: a lane takes one 64-bit word per 32 bytes, so after n bytes each
// lane has W = n/32 words and L, H < W·2^32; the sum of the four lanes of
// L + H is below W·2^35, which fits 64 bits for n < 2^34. The Go wrappers
// call the kernels on at most 2^32 bytes at a time (kernels/csum
// maxKernelLen), so there is nothing to flush inside a call.
//
// The tail below 32 bytes is summed (and copied) with scalar 8-, 4-, 2-
// and 1-byte steps, ADDQ/ADCQ with end-around carry; so is the caller's
// accumulator. The kernels never read or write outside the slices.
//
// Run: go run ./csum -out ../csum/csum_amd64.s -stubs ../csum/stubs_amd64.go -pkg csum
package main

import (
	"os"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	os.Setenv("GOOS", "linux")
	os.Setenv("GOARCH", "amd64")
	ConstraintExpr("amd64,gc,!purego")

	genKernel(false)
	genKernel(true)
	Generate()
}

// genKernel emits sumAVX2 or, with withCopy, copySumAVX2.
func genKernel(withCopy bool) {
	name := "sumAVX2"
	if withCopy {
		name = "copySumAVX2"
		TEXT(name, NOSPLIT, "func(dst, src []byte, acc uint64) uint64")
		Pragma("noescape")
		Doc(name+" copies src to dst[:len(src)] and adds src to the running RFC 1071 sum acc (as kernels/csum.Sum), in one pass with AVX2.",
			"len(dst) = len(src) ≤ 2^32, and the two do not overlap (the caller checks).")
	} else {
		TEXT(name, NOSPLIT, "func(acc uint64, b []byte) uint64")
		Pragma("noescape")
		Doc(name + " adds b to the running RFC 1071 sum acc (as kernels/csum.Sum) with AVX2; len(b) ≤ 2^32 (the caller checks).")
	}
	src, dst, n, acc, t := GP64(), GP64(), GP64(), GP64(), GP64()
	if withCopy {
		Load(Param("dst").Base(), dst)
		Load(Param("src").Base(), src)
		Load(Param("src").Len(), n)
	} else {
		Load(Param("b").Base(), src)
		Load(Param("b").Len(), n)
	}
	Load(Param("acc"), acc)

	advance := func(k int) {
		ADDQ(U32(k), src)
		if withCopy {
			ADDQ(U32(k), dst)
		}
		SUBQ(U32(k), n)
	}

	CMPQ(n, U8(32))
	JB(LabelRef(name + "_tail8"))

	const ways = 4
	var s, h, x, y [ways]VecVirtual
	for i := range ways {
		s[i], h[i], x[i], y[i] = YMM(), YMM(), YMM(), YMM()
		VPXOR(s[i], s[i], s[i])
		VPXOR(h[i], h[i], h[i])
	}
	step := func(i int, disp int) {
		VMOVDQU(Mem{Base: src, Disp: disp}, x[i])
		if withCopy {
			VMOVDQU(x[i], Mem{Base: dst, Disp: disp})
		}
		VPSRLQ(U8(32), x[i], y[i])
		VPADDQ(x[i], s[i], s[i])
		VPADDQ(y[i], h[i], h[i])
	}

	Comment("128 bytes per iteration into four (S, H) pairs.")
	Label(name + "_loop128")
	CMPQ(n, U32(32*ways))
	JB(LabelRef(name + "_loop32"))
	for i := range ways {
		step(i, 32*i)
	}
	advance(32 * ways)
	JMP(LabelRef(name + "_loop128"))

	Comment("32 bytes per iteration into the first pair.")
	Label(name + "_loop32")
	CMPQ(n, U8(32))
	JB(LabelRef(name + "_reduce"))
	step(0, 0)
	advance(32)
	JMP(LabelRef(name + "_loop32"))

	Comment("S and H of all pairs, then each lane's L + H = S - H<<32 + H, then the four lanes.")
	Label(name + "_reduce")
	VPADDQ(s[1], s[0], s[0])
	VPADDQ(s[3], s[2], s[2])
	VPADDQ(s[2], s[0], s[0])
	VPADDQ(h[1], h[0], h[0])
	VPADDQ(h[3], h[2], h[2])
	VPADDQ(h[2], h[0], h[0])
	VPSLLQ(U8(32), h[0], x[0])
	VPSUBQ(x[0], s[0], s[0])
	VPADDQ(h[0], s[0], s[0])
	VEXTRACTI128(U8(1), s[0], x[1].AsX())
	VPADDQ(x[1].AsX(), s[0].AsX(), s[0].AsX())
	VPSHUFD(U8(0x4e), s[0].AsX(), x[1].AsX())
	VPADDQ(x[1].AsX(), s[0].AsX(), s[0].AsX())
	VMOVQ(s[0].AsX(), t)
	VZEROUPPER()
	ADDQ(t, acc)
	ADCQ(U8(0), acc)

	Comment("The tail: 8, 4, 2 and 1 bytes, with end-around carry.")
	Label(name + "_tail8")
	CMPQ(n, U8(8))
	JB(LabelRef(name + "_tail4"))
	MOVQ(Mem{Base: src}, t)
	if withCopy {
		MOVQ(t, Mem{Base: dst})
	}
	ADDQ(t, acc)
	ADCQ(U8(0), acc)
	advance(8)
	JMP(LabelRef(name + "_tail8"))

	Label(name + "_tail4")
	CMPQ(n, U8(4))
	JB(LabelRef(name + "_tail2"))
	MOVL(Mem{Base: src}, t.As32()) // zero-extends
	if withCopy {
		MOVL(t.As32(), Mem{Base: dst})
	}
	ADDQ(t, acc)
	ADCQ(U8(0), acc)
	advance(4)

	Label(name + "_tail2")
	CMPQ(n, U8(2))
	JB(LabelRef(name + "_tail1"))
	MOVWQZX(Mem{Base: src}, t)
	if withCopy {
		MOVW(t.As16(), Mem{Base: dst})
	}
	ADDQ(t, acc)
	ADCQ(U8(0), acc)
	advance(2)

	Label(name + "_tail1")
	CMPQ(n, U8(1))
	JB(LabelRef(name + "_done"))
	MOVBQZX(Mem{Base: src}, t)
	if withCopy {
		MOVB(t.As8(), Mem{Base: dst})
	}
	ADDQ(t, acc)
	ADCQ(U8(0), acc)

	Label(name + "_done")
	Store(acc, ReturnIndex(0))
	RET()
}
