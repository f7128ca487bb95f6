package config

// AutoRunToCompletionCPUs is the largest CPU count for which
// run_to_completion = "auto" chooses run to completion: on one CPU the
// workers cannot run in parallel and their hand-offs only cost. On 2 vCPUs
// (AMD EPYC, docs/BENCHMARKS.md) run to completion carried 64-byte UDP at
// 1.17× the packets for 0.72× the CPU per packet, but one TCP stream at
// only 0.81× (sm4-gcm) and 0.90× (zuc-256) the workers' throughput, so
// from 2 CPUs on "auto" keeps the workers.
const AutoRunToCompletionCPUs = 1

// AutoRunToCompletion resolves interface.run_to_completion for a daemon
// that may run on cpus CPUs.
func (ifc *Interface) AutoRunToCompletion(cpus int) bool {
	if ifc.RunToCompletionAuto {
		return cpus <= AutoRunToCompletionCPUs
	}
	return ifc.RunToCompletion
}
