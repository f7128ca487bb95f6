//go:build !(amd64 && gc && !purego)

package zuc

// Without the multi-lane kernels (other architectures, gccgo, -tags
// purego) the batch primitives are the generic loops, and no
// implementation is registered with ciphers/internal/impl.

// Scratch is the working memory of the batch primitives' lane kernels:
// empty without them (see the amd64 definition for its use).
type Scratch struct{}

// XORKeyStreams128 is XORKeyStreams128Generic.
func (*Scratch) XORKeyStreams128(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, bufs *[Lanes][]byte, n int) {
	XORKeyStreams128Generic(key, ivs, bufs, n)
}

// EIA3Tags is EIA3TagsGeneric.
func (*Scratch) EIA3Tags(key *[KeySize128]byte, ivs *[Lanes][IVSize128]byte, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	EIA3TagsGeneric(key, ivs, msgs, tags, n)
}

// XORKeyStreams256 is XORKeyStreams256Generic.
func (*Scratch) XORKeyStreams256(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bufs *[Lanes][]byte, n int) {
	XORKeyStreams256Generic(key, ivs, bufs, n)
}

// MAC256Tags is MAC256TagsGeneric.
func (*Scratch) MAC256Tags(key *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	MAC256TagsGeneric(key, ivs, msgs, tags, n)
}

// EncryptThenMAC128 is EncryptThenMAC128Generic.
func (*Scratch) EncryptThenMAC128(encKey, macKey *[KeySize128]byte, eea, eia *[Lanes][IVSize128]byte, bodies, msgs *[Lanes][]byte, tags *[Lanes]uint32, n int) {
	EncryptThenMAC128Generic(encKey, macKey, eea, eia, bodies, msgs, tags, n)
}

// EncryptThenMAC256 is EncryptThenMAC256Generic.
func (*Scratch) EncryptThenMAC256(encKey, macKey *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bodies, msgs *[Lanes][]byte, tags *[Lanes][MAC256TagSize]byte, n int) {
	EncryptThenMAC256Generic(encKey, macKey, ivs, bodies, msgs, tags, n)
}

// VerifyThenDecrypt128 is VerifyThenDecrypt128Generic.
func (*Scratch) VerifyThenDecrypt128(encKey, macKey *[KeySize128]byte, eea, eia *[Lanes][IVSize128]byte, bodies, msgs *[Lanes][]byte, want *[Lanes]uint32, n int) uint32 {
	return VerifyThenDecrypt128Generic(encKey, macKey, eea, eia, bodies, msgs, want, n)
}

// VerifyThenDecrypt256 is VerifyThenDecrypt256Generic.
func (*Scratch) VerifyThenDecrypt256(encKey, macKey *[KeySize256]byte, ivs *[Lanes][IVSize256]byte, bodies, msgs *[Lanes][]byte, want *[Lanes][MAC256TagSize]byte, n int) uint32 {
	return VerifyThenDecrypt256Generic(encKey, macKey, ivs, bodies, msgs, want, n)
}
