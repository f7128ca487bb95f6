package cpu

// The names of the kernel tiers: the one spelling of each, for people
// (logs, `gmtun show`, `gmtun version`, metrics, `gmtun bench`). The
// kernel packages' Tier.String methods return them, ciphers/internal
// registers its dispatch flags under them, and `gmtun bench` names its
// GODEBUG masks after them in lower case. A name is the instruction sets
// that set the tier apart; tiers of different primitives that share those
// share the name.
const (
	TierAVX512GFNI     = "AVX-512+GFNI"
	TierAVX512VBMI     = "AVX-512+VBMI"
	TierAVX512         = "AVX-512"
	TierAVX512AESNI    = "AVX-512+AES-NI"
	TierAVX2GFNI       = "AVX2+GFNI"
	TierAVX2VAES       = "AVX2+VAES"
	TierAVX2VPCLMULQDQ = "AVX2+VPCLMULQDQ"
	TierAVX2AESNI      = "AVX2+AES-NI"
	TierAVX2           = "AVX2"
	TierPCLMULQDQ      = "PCLMULQDQ"
	// TierGeneric is the portable Go of every primitive (the
	// implementation registry's impl.Generic).
	TierGeneric = "generic"
)

// Cap is a GODEBUG mask that caps the tiers a process may select: on a CPU
// with every feature, the SM4 kernels under GODEBUG run Tier (and the
// other primitives their best tier without the features switched off).
type Cap struct {
	Tier    string // one of the Tier* names
	GODEBUG string // comma-separated "cpu.<name>=off" fields
}

// Caps returns the masks that step an AVX-512 CPU down to each narrower
// SM4 tier, widest first: the tiers `gmtun bench` measures besides the
// unmasked one and the generic code (AllOff).
func Caps() []Cap {
	return []Cap{
		{Tier: TierAVX512AESNI, GODEBUG: SkylakeSP},
		{Tier: TierAVX2GFNI, GODEBUG: "cpu.avx512f=off"},
		{Tier: TierAVX2VAES, GODEBUG: "cpu.avx512f=off,cpu.gfni=off"},
		{Tier: TierAVX2AESNI, GODEBUG: "cpu.avx512f=off,cpu.gfni=off,cpu.vaes=off,cpu.vpclmulqdq=off"},
	}
}

// AllOff is the GODEBUG mask that switches every feature off (x/sys/cpu's
// and the ones probed here), leaving the generic code.
const AllOff = "cpu.all=off"

// SkylakeSP is the GODEBUG mask that leaves an AVX-512 CPU with the
// features of Intel's Skylake-SP and Cascade Lake servers: AVX-512
// F/BW/VL/DQ and 128-bit AES-NI, but no GFNI, VAES, VPCLMULQDQ, VBMI or
// VBMI2. The tiers for such CPUs are measured under it.
const SkylakeSP = "cpu.gfni=off,cpu.vaes=off,cpu.vpclmulqdq=off,cpu.avx512vbmi2=off,cpu.avx512vbmi=off"
