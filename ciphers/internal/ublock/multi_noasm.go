//go:build !amd64 || !gc || purego

package ublock

// ctr32XORMulti runs the jobs on the generic code (no kernels in this
// build); the complement of ctr32XORMulti in dispatch_amd64.go.
func ctr32XORMulti(jobs []Job) { ctr32XORMultiGeneric(jobs) }
