package cryptobench

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"slices"

	gmsm4 "github.com/emmansun/gmsm/sm4"
	gmzuc "github.com/emmansun/gmsm/zuc"

	"github.com/gmtun/gmtun/ciphers"
)

// Implementations a result can belong to.
const (
	ImplGmtun = "gmtun" // gmtun's ciphers.Key, batch API
	ImplGMSM  = "gmsm"  // github.com/emmansun/gmsm, one packet per call
	ImplGo    = "go"    // the Go standard library, one packet per call
)

// AESGCM is the suite name of the Go AES-128-GCM anchor (compared with
// sm4-gcm).
const AESGCM = "aes-128-gcm"

// packetCodec seals or opens one packet laid out as the suites lay it out:
// seal takes header ‖ body (with capacity for the tag) and returns header
// ‖ ciphertext ‖ tag; open reverses it in place.
type packetCodec interface {
	seal(pkt []byte) ([]byte, error)
	open(pkt []byte) ([]byte, bool, error)
}

// counter returns the counter of a packet header.
func counter(pkt []byte) uint64 { return ciphers.Counter(pkt) }

// aeadCodec is a 12-byte-nonce GCM AEAD used as sm4-gcm is (RFC 8998 with
// nonce = salt ⊕ (0^4 ‖ BE64(c)), the header as additional data): gmsm
// SM4 or Go AES under crypto/cipher.NewGCM.
//
// The codecs are benchmark harness used by one goroutine, so they keep
// their per-packet scratch (nonce, IV, tag) in the struct: on the stack
// it would escape through the interface calls and add an allocation per
// packet that is the harness's cost, not the library's.
type aeadCodec struct {
	aead  cipher.AEAD
	salt  [12]byte
	nonce [12]byte
}

// setNonce sets a.nonce to the nonce of counter c.
func (a *aeadCodec) setNonce(c uint64) {
	a.nonce = a.salt
	binary.BigEndian.PutUint64(a.nonce[4:], binary.BigEndian.Uint64(a.salt[4:])^c)
}

func (a *aeadCodec) seal(pkt []byte) ([]byte, error) {
	a.setNonce(counter(pkt))
	return a.aead.Seal(pkt[:headerSize], a.nonce[:], pkt[headerSize:], pkt[:headerSize]), nil
}

func (a *aeadCodec) open(pkt []byte) ([]byte, bool, error) {
	a.setNonce(counter(pkt))
	pt, err := a.aead.Open(pkt[headerSize:headerSize], a.nonce[:], pkt[headerSize:], pkt[:headerSize])
	if err != nil {
		return pkt, false, nil
	}
	return pkt[:headerSize+len(pt)], true, nil
}

// zuc128Codec is gmtun's zuc-128 construction built from gmsm: 128-EEA3
// over the body, then 128-EIA3 over header ‖ ciphertext, with COUNT = c
// mod 2^32, BEARER = ⌊c/2^32⌋ mod 32 (docs/PROTOCOL.md). gmsm needs a new
// cipher and a new MAC object per packet: that is its per-packet IV setup.
type zuc128Codec struct {
	enc, mac  []byte
	direction uint32
	tag       [4]byte
}

func (z *zuc128Codec) params(c uint64) (count, bearer uint32) {
	return uint32(c), uint32(c>>32) & 31
}

func (z *zuc128Codec) seal(pkt []byte) ([]byte, error) {
	count, bearer := z.params(counter(pkt))
	n := len(pkt)
	s, err := gmzuc.NewEEACipher(z.enc, count, bearer, z.direction)
	if err != nil {
		return nil, err
	}
	s.XORKeyStream(pkt[headerSize:n], pkt[headerSize:n])
	h, err := gmzuc.NewEIAHash(z.mac, count, bearer, z.direction)
	if err != nil {
		return nil, err
	}
	h.Write(pkt[:n])
	return h.Sum(pkt[:n]), nil
}

func (z *zuc128Codec) open(pkt []byte) ([]byte, bool, error) {
	count, bearer := z.params(counter(pkt))
	n := len(pkt) - 4
	h, err := gmzuc.NewEIAHash(z.mac, count, bearer, z.direction)
	if err != nil {
		return nil, false, err
	}
	h.Write(pkt[:n])
	if subtle.ConstantTimeCompare(h.Sum(z.tag[:0]), pkt[n:]) != 1 {
		return pkt, false, nil
	}
	s, err := gmzuc.NewEEACipher(z.enc, count, bearer, z.direction)
	if err != nil {
		return nil, false, err
	}
	s.XORKeyStream(pkt[headerSize:n], pkt[headerSize:n])
	return pkt[:n], true, nil
}

// zuc256Codec is gmtun's zuc-256 construction built from gmsm: ZUC-256
// keystream over the body and the 128-bit ZUC-256 MAC over header ‖
// ciphertext, both with IV = BE64(c) ‖ salt ‖ 0^6 (23-byte packing), a new
// gmsm cipher and MAC object per packet.
type zuc256Codec struct {
	enc, mac []byte
	salt     [9]byte
	iv       [23]byte
	tag      [16]byte
}

// setIV sets z.iv to the IV of counter c.
func (z *zuc256Codec) setIV(c uint64) {
	binary.BigEndian.PutUint64(z.iv[:8], c)
	copy(z.iv[8:17], z.salt[:])
	clear(z.iv[17:])
}

func (z *zuc256Codec) seal(pkt []byte) ([]byte, error) {
	z.setIV(counter(pkt))
	n := len(pkt)
	s, err := gmzuc.NewCipher(z.enc, z.iv[:])
	if err != nil {
		return nil, err
	}
	s.XORKeyStream(pkt[headerSize:n], pkt[headerSize:n])
	h, err := gmzuc.NewHash256(z.mac, z.iv[:], 16)
	if err != nil {
		return nil, err
	}
	h.Write(pkt[:n])
	return h.Sum(pkt[:n]), nil
}

func (z *zuc256Codec) open(pkt []byte) ([]byte, bool, error) {
	z.setIV(counter(pkt))
	n := len(pkt) - 16
	h, err := gmzuc.NewHash256(z.mac, z.iv[:], 16)
	if err != nil {
		return nil, false, err
	}
	h.Write(pkt[:n])
	if subtle.ConstantTimeCompare(h.Sum(z.tag[:0]), pkt[n:]) != 1 {
		return pkt, false, nil
	}
	s, err := gmzuc.NewCipher(z.enc, z.iv[:])
	if err != nil {
		return nil, false, err
	}
	s.XORKeyStream(pkt[headerSize:n], pkt[headerSize:n])
	return pkt[:n], true, nil
}

// hasGMSMAnchor reports whether gmsm has an equivalent of suite id:
// every suite but ublock-gcm (gmsm has no uBlock), which is compared with
// Go's AES-128-GCM only.
func hasGMSMAnchor(id ciphers.SuiteID) bool { return id != ciphers.UBlockGCM }

// aesAnchorSuite returns the suite of suites the AES-128-GCM anchor is
// listed with: sm4-gcm if selected, else ublock-gcm if selected, else 0.
func aesAnchorSuite(suites []ciphers.SuiteID) ciphers.SuiteID {
	switch {
	case slices.Contains(suites, ciphers.SM4GCM):
		return ciphers.SM4GCM
	case slices.Contains(suites, ciphers.UBlockGCM):
		return ciphers.UBlockGCM
	}
	return 0
}

// newGCMCodec wraps block (or its construction error) in GCM with the
// suite's salt: the AES-GCM and gmsm SM4-GCM anchors.
func newGCMCodec(block cipher.Block, err error, salt []byte) (packetCodec, error) {
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	c := &aeadCodec{aead: aead}
	copy(c.salt[:], salt)
	return c, nil
}

// newAnchorCodec returns the per-packet codec of an anchor: impl ImplGMSM
// with a gmtun suite name, or ImplGo with AESGCM. It uses the same key
// material as the gmtun Key of that suite (AES-GCM borrows sm4-gcm's).
func newAnchorCodec(suite, impl string) (packetCodec, error) {
	if impl == ImplGo && suite == AESGCM {
		k := benchKeys(ciphers.SM4GCM)
		block, err := aes.NewCipher(k.Enc)
		return newGCMCodec(block, err, k.Salt)
	}
	id, err := ciphers.ParseSuite(suite)
	if err != nil || impl != ImplGMSM || !hasGMSMAnchor(id) {
		return nil, fmt.Errorf("cryptobench: no anchor %s/%s", impl, suite)
	}
	k := benchKeys(id)
	switch id {
	case ciphers.SM4GCM:
		block, err := gmsm4.NewCipher(k.Enc)
		return newGCMCodec(block, err, k.Salt)
	case ciphers.ZUC128:
		return &zuc128Codec{enc: k.Enc, mac: k.MAC, direction: uint32(k.Direction)}, nil
	default: // ciphers.ZUC256
		c := &zuc256Codec{enc: k.Enc, mac: k.MAC}
		copy(c.salt[:], k.Salt)
		return c, nil
	}
}

// codecSeal seals a batch one packet at a time with a packetCodec.
type codecSeal struct {
	c packetCodec
	b *batch
}

func (s *codecSeal) step() error {
	s.b.stamp()
	for i, p := range s.b.pkts {
		out, err := s.c.seal(p)
		if err != nil {
			return err
		}
		s.b.pkts[i] = out
	}
	return nil
}

// codecOpen opens a batch one packet at a time, restoring it from sealed
// before each step.
type codecOpen struct {
	c      packetCodec
	b      *batch
	sealed [][]byte
}

func (s *codecOpen) step() error {
	for i, sealed := range s.sealed {
		p := s.b.pkts[i][:len(sealed)]
		copy(p, sealed)
		out, ok, err := s.c.open(p)
		if err != nil {
			return err
		}
		if !ok {
			return errNotVerified
		}
		s.b.pkts[i] = out
	}
	return nil
}

// newAnchorStepper returns the stepper of an anchor cell.
func newAnchorStepper(suite, impl, op string, size, n int) (stepper, error) {
	c, err := newAnchorCodec(suite, impl)
	if err != nil {
		return nil, err
	}
	b := newBatch(n, size)
	switch op {
	case OpSeal:
		return &codecSeal{c: c, b: b}, nil
	case OpOpen:
		s := &codecSeal{c: c, b: b}
		if err := s.step(); err != nil {
			return nil, err
		}
		sealed := make([][]byte, n)
		for i, p := range b.pkts {
			sealed[i] = append([]byte(nil), p...)
		}
		return &codecOpen{c: c, b: b, sealed: sealed}, nil
	}
	return nil, fmt.Errorf("cryptobench: unknown operation %q", op)
}
