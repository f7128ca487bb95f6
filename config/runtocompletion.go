package config

// AutoRunToCompletionCPUs is the largest CPU count for which
// run_to_completion = "auto" chooses run to completion. On one CPU the
// workers cannot run in parallel and their hand-offs only cost. On 2 vCPUs
// (AMD EPYC Zen 5, 2026-12-07, docs/BENCHMARKS.md "Run to completion on
// 2 vCPUs") run to completion carried 64-byte UDP at 1.09–1.62× the
// packets for 0.50–0.79× the CPU per packet and one TCP stream at
// 0.91–1.41× the workers' throughput, mostly for less CPU per GB, with the
// AVX-512 kernels and with the AVX2 ones alike. (An earlier tree on an
// AVX2 EPYC, 2026-12-02, had lost 10–19 % of TCP that way.) From 3 CPUs
// on "auto" keeps the workers, which let one peer's crypto use more than
// one core per direction.
const AutoRunToCompletionCPUs = 2

// AutoRunToCompletion resolves interface.run_to_completion for a daemon
// that may run on cpus CPUs.
func (ifc *Interface) AutoRunToCompletion(cpus int) bool {
	if ifc.RunToCompletionAuto {
		return cpus <= AutoRunToCompletionCPUs
	}
	return ifc.RunToCompletion
}
