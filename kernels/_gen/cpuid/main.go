// Command cpuid generates kernels/cpu/cpu_amd64.s and its Go stubs: the
// two instructions the CPU feature probe needs that Go cannot express,
// CPUID (Intel SDM Vol. 2A, "CPUID—CPU Identification") and XGETBV with
// ECX = 0 (reads XCR0, Intel SDM Vol. 1 §13.3).
//
// Run: go run ./cpuid -out ../cpu/cpu_amd64.s -stubs ../cpu/stubs_amd64.go -pkg cpu
package main

import (
	"os"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	os.Setenv("GOOS", "linux")
	os.Setenv("GOARCH", "amd64")
	ConstraintExpr("amd64,gc,!purego")

	TEXT("cpuid", NOSPLIT, "func(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)")
	Pragma("noescape")
	Doc("cpuid executes CPUID with the given leaf (EAX) and subleaf (ECX).")
	Load(Param("leaf"), EAX)
	Load(Param("subleaf"), ECX)
	CPUID()
	Store(EAX, Return("eax"))
	Store(EBX, Return("ebx"))
	Store(ECX, Return("ecx"))
	Store(EDX, Return("edx"))
	RET()

	TEXT("xgetbv", NOSPLIT, "func() (eax, edx uint32)")
	Pragma("noescape")
	Doc("xgetbv reads extended control register XCR0 (XGETBV with ECX = 0).")
	XORL(ECX, ECX)
	XGETBV()
	Store(EAX, Return("eax"))
	Store(EDX, Return("edx"))
	RET()

	Generate()
}
