package ublock

// Job is one counter-mode keystream XOR of CTR32XORMulti: Src XORed with
// the GCM keystream (SP 800-38D §6.5 GCTR, inc32) of schedule S from the
// counter block *Ctr into Dst, as ctr32XOR does; *Ctr is advanced past the
// blocks used.
type Job struct {
	S        *Schedule
	Ctr      *[16]byte
	Dst, Src []byte
}

// CTR32XORMulti runs every job as ctr32XOR would, in the multi-key
// kernel where the CPU has one: the blocks of several jobs, each under its
// own key, share the same registers (uBlock's multi-key scenario, e.g. the
// packets of many peers in one batch). Every schedule must have the
// 128-bit block; each Dst must be at least as long as its Src and equal to
// it or not overlap it, and jobs must not overlap each other. The result
// is the same as running the jobs one by one.
func CTR32XORMulti(jobs []Job) { ctr32XORMulti(jobs) }

// ctr32XORMultiGeneric runs the jobs one by one on the generic code.
func ctr32XORMultiGeneric(jobs []Job) {
	for i := range jobs {
		j := &jobs[i]
		checkJob(j)
		ctr32XORGeneric(j.S, j.Ctr, j.Dst, j.Src)
	}
}

// checkJob panics on a job no tier may run.
func checkJob(j *Job) {
	if j.S.BlockSize != BlockSize {
		panic("ublock: CTR needs a 128-bit block")
	}
	if len(j.Dst) < len(j.Src) {
		panic("ublock: output smaller than input")
	}
}
