package ublock

import (
	"crypto/subtle"

	"github.com/gmtun/gmtun/ciphers/internal/ghash"
)

// GCM limits for the only parameters gmtun supports: 12-byte nonce,
// 16-byte tag (as AEAD_SM4_GCM, RFC 8998 §3.3).
const (
	// NonceSize is the GCM nonce (IV) length in bytes (SP 800-38D §8.2.1
	// recommends 96 bits).
	NonceSize = 12
	// TagSize is the GCM tag length in bytes (128 bits).
	TagSize = 16
	// MaxPlaintextSize is the largest plaintext GCM admits:
	// 2^39 − 256 bits (SP 800-38D §5.2.1.1), i.e. 2^32 − 2 blocks, so the
	// 32-bit counter field never wraps.
	MaxPlaintextSize = (1<<32 - 2) * BlockSize
)

// maxShort is the longest text that Seal and Open run through one CTR
// call together with the tag mask (15 blocks, so 16 with E_K(J0)).
const maxShort = 15 * BlockSize

// GCM is a uBlock-GCM key (NIST SP 800-38D over uBlock-128/128 or
// uBlock-128/256; docs/PROTOCOL.md, "ublock-gcm"): the uBlock schedule and
// the GHASH subkey H = E_K(0^128) in both of its forms. It is immutable
// after NewGCM or Init and safe for concurrent use; zero it to wipe it.
type GCM struct {
	s    Schedule
	hkey ghash.Key
}

// NewGCM expands key (16 bytes: uBlock-128/128; 32 bytes: uBlock-128/256)
// into a GCM.
func NewGCM(key []byte) (*GCM, error) {
	g := new(GCM)
	if err := g.Init(key); err != nil {
		return nil, err
	}
	return g, nil
}

// Init sets g to the key; it lets callers embed a GCM by value.
func (g *GCM) Init(key []byte) error {
	if err := initSchedule(&g.s, key, BlockSize); err != nil {
		return err
	}
	// The hash subkey H = E_K(0^128) (SP 800-38D §7.1 step 1).
	var h [16]byte
	encryptBlocks(&g.s, h[:], h[:])
	g.hkey.Init(&h)
	clear(h[:])
	return nil
}

// j0 returns J0 = nonce ‖ 0^31 ‖ 1 (SP 800-38D §7.1 step 2).
func j0(nonce *[NonceSize]byte) (ctr [BlockSize]byte) {
	copy(ctr[:], nonce[:])
	ctr[15] = 1
	return ctr
}

// firstCounter returns inc32(J0) = nonce ‖ 0^30 ‖ 10, where GCTR starts
// (§7.1 step 3).
func firstCounter(nonce *[NonceSize]byte) (ctr [BlockSize]byte) {
	copy(ctr[:], nonce[:])
	ctr[15] = 2
	return ctr
}

// Seal encrypts plaintext into out (the first len(plaintext) bytes) and
// writes the authentication tag over aad and the ciphertext into tag
// (SP 800-38D §7.1, GCM-AE with a 96-bit IV). out and plaintext may
// overlap exactly (in place) but not otherwise; len(plaintext) must not
// exceed MaxPlaintextSize. The caller checks these preconditions.
func (g *GCM) Seal(out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	n := len(plaintext)
	var y [16]byte
	if n <= maxShort {
		// One CTR call from J0 over E_K(J0)'s block and the text, in
		// scratch memory: the keystream of J0, inc32(J0), … is the tag
		// mask and then GCTR's.
		var buf [BlockSize + maxShort]byte
		copy(buf[BlockSize:], plaintext)
		ctr := j0(nonce)
		ctr32XOR(&g.s, &ctr, buf[:BlockSize+n], buf[:BlockSize+n])
		copy(out[:n], buf[BlockSize:])
		g.hkey.GCMHash(&y, aad, out[:n])
		subtle.XORBytes(tag[:], y[:], buf[:BlockSize])
		clear(buf[:])
		return
	}
	mask := j0(nonce)
	encryptBlocks(&g.s, mask[:], mask[:]) // E_K(J0)
	ctr := firstCounter(nonce)
	ctr32XOR(&g.s, &ctr, out[:n], plaintext)
	g.hkey.GCMHash(&y, aad, out[:n])
	subtle.XORBytes(tag[:], y[:], mask[:])
}

// Open verifies tag over aad and ciphertext (SP 800-38D §7.2, GCM-AD)
// with a constant-time comparison and only then decrypts ciphertext into
// out. It reports whether the tag was valid; if not, out has not been
// written. out and ciphertext may overlap exactly but not otherwise.
func (g *GCM) Open(out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	n := len(ciphertext)
	if n <= maxShort {
		// As in Seal: the mask and the plaintext come out of one CTR call
		// into scratch memory, and reach out only once the tag verified.
		var buf [BlockSize + maxShort]byte
		copy(buf[BlockSize:], ciphertext)
		ctr := j0(nonce)
		ctr32XOR(&g.s, &ctr, buf[:BlockSize+n], buf[:BlockSize+n])
		ok := g.verify((*[BlockSize]byte)(buf[:BlockSize]), ciphertext, aad, tag)
		if ok {
			copy(out[:n], buf[BlockSize:])
		}
		clear(buf[:])
		return ok
	}
	mask := j0(nonce)
	encryptBlocks(&g.s, mask[:], mask[:])
	if !g.verify(&mask, ciphertext, aad, tag) {
		return false
	}
	ctr := firstCounter(nonce)
	ctr32XOR(&g.s, &ctr, out[:n], ciphertext)
	return true
}

// verify reports in constant time whether tag is GHASH(aad, ciphertext)
// ⊕ mask.
func (g *GCM) verify(mask *[BlockSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	var y [16]byte
	g.hkey.GCMHash(&y, aad, ciphertext)
	subtle.XORBytes(y[:], y[:], mask[:])
	return subtle.ConstantTimeCompare(y[:], tag[:]) == 1
}

// Packet is one message of a batch for SealBatch and OpenBatch: Text is
// sealed or opened in place, with AAD as additional data and the tag in
// *Tag. Text, AAD and Tag of all packets of a batch must not overlap one
// another, and len(Text) must not exceed MaxPlaintextSize.
type Packet struct {
	Nonce [NonceSize]byte
	AAD   []byte
	Text  []byte
	Tag   *[TagSize]byte
}

// batchChunk is how many long packets a batch gathers per
// CTR32XORMulti call, and multiMin the fewest for which that call is
// used: the multi-key kernel runs one job per lane (eight lanes on
// AVX-512), so a few jobs leave most lanes empty and run slower than the
// single-key CTR (measured: one 1420-byte packet 190 MB/s against 1000).
const (
	batchChunk = 16
	multiMin   = 8
)

// SealBatch seals every packet of ps in place, exactly as Seal(p.Text,
// p.Tag, &p.Nonce, p.Text, p.AAD) would. Short packets (up to maxShort
// bytes) take Seal's single CTR call each; for the others the tag mask
// E_K(J0) and the text of each are two jobs of one CTR32XORMulti call per
// batchChunk packets, so that the kernels' registers fill across packets.
// (Measured on AVX-512: the multi-job call wins from about 16 blocks a
// packet, the single call below.)
func (g *GCM) SealBatch(ps []Packet) {
	var jobs [2 * batchChunk]Job
	var ctrs [2 * batchChunk][BlockSize]byte
	var long [batchChunk]*Packet
	var zero [BlockSize]byte
	n := 0
	flush := func() {
		if n < multiMin {
			for _, p := range long[:n] {
				g.Seal(p.Text, p.Tag, &p.Nonce, p.Text, p.AAD)
			}
			n = 0
			return
		}
		ctr32XORMulti(jobs[:2*n])
		for _, p := range long[:n] {
			var y [16]byte
			g.hkey.GCMHash(&y, p.AAD, p.Text)
			subtle.XORBytes(p.Tag[:], p.Tag[:], y[:])
		}
		n = 0
	}
	for i := range ps {
		p := &ps[i]
		if len(p.Text) <= maxShort {
			g.Seal(p.Text, p.Tag, &p.Nonce, p.Text, p.AAD)
			continue
		}
		ctrs[2*n] = j0(&p.Nonce)
		ctrs[2*n+1] = firstCounter(&p.Nonce)
		jobs[2*n] = Job{S: &g.s, Ctr: &ctrs[2*n], Dst: p.Tag[:], Src: zero[:]}
		jobs[2*n+1] = Job{S: &g.s, Ctr: &ctrs[2*n+1], Dst: p.Text, Src: p.Text}
		long[n] = p
		if n++; n == batchChunk {
			flush()
		}
	}
	if n > 0 {
		flush()
	}
}

// OpenBatch verifies every packet of ps and decrypts in place those whose
// tag is valid, exactly as Open(p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
// would; ok[i] reports whether ps[i] verified (len(ok) ≥ len(ps)). A
// packet that fails is left unmodified. Short packets take Open's single
// CTR call; for the others, per batchChunk packets, the tag masks take
// one ECB call and, once every tag of the chunk is checked, the texts of
// those that verified one CTR32XORMulti call.
func (g *GCM) OpenBatch(ps []Packet, ok []bool) {
	_ = ok[:len(ps)]
	var m [batchChunk * BlockSize]byte
	var jobs [batchChunk]Job
	var ctrs [batchChunk][BlockSize]byte
	var long [batchChunk]int
	n := 0
	flush := func() {
		encryptBlocks(&g.s, m[:n*BlockSize], m[:n*BlockSize])
		k := 0
		for j, i := range long[:n] {
			p := &ps[i]
			ok[i] = g.verify((*[BlockSize]byte)(m[j*BlockSize:]), p.Text, p.AAD, p.Tag)
			if ok[i] {
				ctrs[k] = firstCounter(&p.Nonce)
				jobs[k] = Job{S: &g.s, Ctr: &ctrs[k], Dst: p.Text, Src: p.Text}
				k++
			}
		}
		if k < multiMin {
			for j := range jobs[:k] {
				ctr32XOR(&g.s, jobs[j].Ctr, jobs[j].Dst, jobs[j].Src)
			}
		} else {
			ctr32XORMulti(jobs[:k])
		}
		clear(jobs[:k])
		clear(m[:])
		n = 0
	}
	for i := range ps {
		p := &ps[i]
		if len(p.Text) <= maxShort {
			ok[i] = g.Open(p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
			continue
		}
		*(*[BlockSize]byte)(m[n*BlockSize:]) = j0(&p.Nonce)
		long[n] = i
		if n++; n == batchChunk {
			flush()
		}
	}
	if n > 0 {
		flush()
	}
}
