package sm4

// GCM limits for the only parameters gmtun supports (RFC 8998
// AEAD_SM4_GCM): 12-byte nonce, 16-byte tag.
const (
	// NonceSize is the GCM nonce (IV) length in bytes (SP 800-38D §8.2.1
	// recommends 96 bits; RFC 8998 §3.3 requires it).
	NonceSize = 12
	// TagSize is the GCM tag length in bytes (RFC 8998 §3.3: 128 bits).
	TagSize = 16
	// MaxPlaintextSize is the largest plaintext GCM admits:
	// 2^39 − 256 bits (SP 800-38D §5.2.1.1), i.e. 2^32 − 2 blocks, so the
	// 32-bit counter field never wraps.
	MaxPlaintextSize = (1<<32 - 2) * BlockSize
)

// GCM is an SM4-GCM key: the SM4 encryption schedule and the
// precomputed GHASH subkey. It is immutable after NewGCM and safe for
// concurrent use.
type GCM struct {
	enc     [32]uint32
	hkey    ghashKey  // for the generic GHASH
	hkeyAsm kernelKey // for the GHASH kernels (empty without assembly)
}

// NewGCM expands key (KeySize bytes) into a GCM.
func NewGCM(key []byte) (*GCM, error) {
	g := new(GCM)
	if err := g.Init(key); err != nil {
		return nil, err
	}
	return g, nil
}

// Init sets g to the key; it lets callers embed a GCM by value.
func (g *GCM) Init(key []byte) error {
	var c Cipher
	if err := c.init(key); err != nil {
		return err
	}
	g.enc = c.enc
	// The hash subkey H = E_K(0^128) (SP 800-38D §7.1 step 1).
	var h [16]byte
	cryptBlock(&g.enc, h[:], h[:])
	initGHASHKey(&g.hkey, &h)
	initKernelKey(&g.hkeyAsm, &h)
	return nil
}

// Seal encrypts plaintext into out (the first len(plaintext) bytes) and
// writes the authentication tag over aad and the ciphertext into tag
// (SP 800-38D §7.1, GCM-AE with a 96-bit IV). out and plaintext may
// overlap exactly (in place) but not otherwise; len(plaintext) must not
// exceed MaxPlaintextSize. The caller checks these preconditions.
func (g *GCM) Seal(out []byte, tag *[TagSize]byte, nonce *[NonceSize]byte, plaintext, aad []byte) {
	gcmSeal(g, out, tag, nonce, plaintext, aad)
}

// Open verifies tag over aad and ciphertext (SP 800-38D §7.2, GCM-AD)
// with a constant-time comparison and only then decrypts ciphertext into
// out. It reports whether the tag was valid; if not, out has not been
// written. out and ciphertext may overlap exactly but not otherwise.
func (g *GCM) Open(out []byte, nonce *[NonceSize]byte, ciphertext, aad []byte, tag *[TagSize]byte) bool {
	return gcmOpen(g, out, nonce, ciphertext, aad, tag)
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
// p.Tag, &p.Nonce, p.Text, p.AAD) would, but lets the kernels keep their
// pipelines full across packets.
func (g *GCM) SealBatch(ps []Packet) {
	gcmSealBatch(g, ps)
}

// OpenBatch verifies every packet of ps and decrypts in place those whose
// tag is valid, exactly as Open(p.Text, &p.Nonce, p.Text, p.AAD, p.Tag)
// would; ok[i] reports whether ps[i] verified (len(ok) ≥ len(ps)). A packet
// that fails is left unmodified.
func (g *GCM) OpenBatch(ps []Packet, ok []bool) {
	_ = ok[:len(ps)]
	gcmOpenBatch(g, ps, ok)
}
