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

// maxShort is the longest text that sealGeneric and openGeneric run
// through one CTR call together with the tag mask (15 blocks, so 16 with
// E_K(J0)).
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
	sealGCM(g, out, tag, nonce, plaintext, aad)
}

// Open verifies tag over aad and ciphertext (SP 800-38D §7.2, GCM-AD)
// with a constant-time comparison and only then decrypts ciphertext into
// out. It reports whether the tag was valid; if not, out has not been
// written. out and ciphertext may overlap exactly but not otherwise.
func (g *GCM) Open(out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	return openGCM(g, out, nonce, ciphertext, aad, tag)
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

// SealBatch seals every packet of ps in place, exactly as Seal(p.Text,
// p.Tag, &p.Nonce, p.Text, p.AAD) would. On a kernel tier the packets'
// keystream shares kernel passes (gcm_amd64.go): each packet's whole
// passes run straight through the CTR kernel, and the tag masks E_K(J0)
// and the leftover and partial blocks of all packets are gathered into
// full passes.
func (g *GCM) SealBatch(ps []Packet) { sealBatchGCM(g, ps) }

// OpenBatch verifies every packet of ps and decrypts in place those whose
// tag is valid, exactly as Open(p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
// would; ok[i] reports whether ps[i] verified (len(ok) ≥ len(ps)). A
// packet that fails is left unmodified: every tag is checked before any
// text is written, and only the packets that verified are decrypted.
func (g *GCM) OpenBatch(ps []Packet, ok []bool) {
	_ = ok[:len(ps)]
	openBatchGCM(g, ps, ok)
}

// sealGeneric is Seal on the dispatched primitives (the generic code
// when no kernel tier is enabled).
func (g *GCM) sealGeneric(out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
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

// openGeneric is Open on the dispatched primitives.
func (g *GCM) openGeneric(out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	n := len(ciphertext)
	if n <= maxShort {
		// As in sealGeneric: the mask and the plaintext come out of one
		// CTR call into scratch memory, and reach out only once the tag
		// verified.
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

// sealBatchGeneric seals the packets one by one (sealGeneric).
func (g *GCM) sealBatchGeneric(ps []Packet) {
	for i := range ps {
		p := &ps[i]
		g.sealGeneric(p.Text, p.Tag, &p.Nonce, p.Text, p.AAD)
	}
}

// openBatchGeneric opens the packets one by one (openGeneric, which
// writes a packet's text only once its tag verified).
func (g *GCM) openBatchGeneric(ps []Packet, ok []bool) {
	for i := range ps {
		p := &ps[i]
		ok[i] = g.openGeneric(p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
	}
}
