package config

// AutoRunToCompletionCPUs is the largest CPU count for which
// run_to_completion = "auto" chooses run to completion: on 2 vCPUs it
// carried the same TCP throughput for 0.90× the CPU per GB and 64-byte
// UDP at 0.78× the CPU per packet (docs/BENCHMARKS.md), while with more
// cores the workers let one peer's batches use several of them.
const AutoRunToCompletionCPUs = 2

// AutoRunToCompletion resolves interface.run_to_completion for a daemon
// that may run on cpus CPUs.
func (ifc *Interface) AutoRunToCompletion(cpus int) bool {
	if ifc.RunToCompletionAuto {
		return cpus <= AutoRunToCompletionCPUs
	}
	return ifc.RunToCompletion
}
