//go:build !amd64 || !gc || purego

package ublock

// Without assembly every primitive is the reference implementation, and
// nothing is registered with ciphers/internal/impl (impl.Selected("ublock")
// reports "generic"). This file is the exact complement of
// dispatch_amd64.go.

// kernelSchedule is empty without assembly: there is no kernel layout.
type kernelSchedule struct{}

// initKernelSchedule has no kernel layout to fill without assembly.
func initKernelSchedule(s *Schedule) { _ = s.kernel }

// encryptBlocks encrypts whole blocks of src into dst (ECB); see
// encryptBlocksGeneric.
func encryptBlocks(s *Schedule, dst, src []byte) { encryptBlocksGeneric(s, dst, src) }

// decryptBlocks decrypts whole blocks of src into dst (ECB); see
// decryptBlocksGeneric.
func decryptBlocks(s *Schedule, dst, src []byte) { decryptBlocksGeneric(s, dst, src) }

// ctr32XOR is GCM's CTR keystream XOR; see ctr32XORGeneric.
func ctr32XOR(s *Schedule, ctr *[16]byte, dst, src []byte) { ctr32XORGeneric(s, ctr, dst, src) }
