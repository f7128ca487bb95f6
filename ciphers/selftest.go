package ciphers

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/gmtun/gmtun/ciphers/internal/sm4"
	"github.com/gmtun/gmtun/ciphers/internal/ublock"
	"github.com/gmtun/gmtun/ciphers/internal/zuc"
)

// SelfTest runs known-answer tests through the implementations selected on
// this machine (the SIMD kernels where the CPU has them) and checks every
// suite end to end. The daemon calls it once at start-up, before it
// carries traffic, so a miscompiled or mis-dispatched kernel stops the
// daemon instead of corrupting packets. It takes well under a
// millisecond (its few allocations are start-up only).
//
// The answers are the published vectors: GB/T 32907-2016 App. A example 1
// (SM4), RFC 8998 App. A.1 (SM4-GCM, one-shot and batched), ETSI/SAGE
// 128-EEA3 test set 2, and the ZUC-256 keystream and 128-bit MAC vectors of
// "The ZUC-256 Stream Cipher" (2018), each run in all 16 lanes, and the
// uBlock-128/128 spec vector (testdata/ublock) with a uBlock-GCM answer
// (crypto/cipher's GCM over the vector-checked uBlock; no published
// uBlock-GCM vector exists).
func SelfTest() error {
	for _, t := range []struct {
		name string
		f    func() error
	}{
		{"sm4 block (GB/T 32907 App. A)", selfTestSM4Block},
		{"sm4-gcm (RFC 8998 A.1)", selfTestSM4GCM},
		{"128-EEA3 in lanes (ETSI/SAGE set 2)", selfTestEEA3},
		{"128-EIA3 in lanes (against the reference)", selfTestEIA3},
		{"ZUC-256 keystream in lanes", selfTestZUC256},
		{"ZUC-256 MAC-128 in lanes", selfTestMAC256},
		{"ublock block (spec vector)", selfTestUBlockBlock},
		{"ublock-gcm (one-shot and batched)", selfTestUBlockGCM},
		{"suites seal/open", selfTestSuites},
	} {
		if err := t.f(); err != nil {
			return fmt.Errorf("ciphers: self-test %s failed: %w", t.name, err)
		}
	}
	return nil
}

var errMismatch = errors.New("output differs from the known answer")

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic("ciphers: bad self-test constant: " + err.Error())
	}
	return b
}

func selfTestSM4Block() error {
	key := unhex("0123456789abcdeffedcba9876543210")
	c, err := sm4.NewCipher(key)
	if err != nil {
		return err
	}
	var out [16]byte
	c.Encrypt(out[:], key) // the example's plaintext equals its key
	if !bytes.Equal(out[:], unhex("681edf34d206965e86b3e94f536e4246")) {
		return errMismatch
	}
	return nil
}

// selfTestSM4GCM checks sm4-gcm against RFC 8998 App. A.1.
func selfTestSM4GCM() error {
	return selfTestGCM[sm4.Packet](sm4.NewGCM,
		"17f399f08c67d5ee19d0dc9969c4bb7d5fd46fd3756489069157b282bb200735d82710ca5c22f0ccfa7cbf93d496ac15a56834cbcf98c397b4024a2691233b8d",
		"83de3541e4c2b58177e065a9bf7b62ec")
}

// selfTestUBlockGCM checks uBlock-GCM on RFC 8998 A.1's inputs against
// the answer of crypto/cipher's GCM over the vector-checked uBlock.
func selfTestUBlockGCM() error {
	return selfTestGCM[ublock.Packet](ublock.NewGCM,
		"7ef014984da910c2da7ae2721695fbfd7380b81e5f79c4cd5a7a3a526a283232c447e99ae9bf1ca25b83479449fa89910eba3b88730dd3ced139a37ce07c485c",
		"9820496d0e2777d6aaa7ad9ca5b474f8")
}

// selfTestGCMCipher is the part of a batch GCM (sm4.GCM, ublock.GCM) with
// descriptor P that the self-test runs.
type selfTestGCMCipher[P gcmPacket] interface {
	Seal(out []byte, tag *[gcmTagSize]byte, nonce *[gcmNonceSize]byte, plaintext, aad []byte)
	SealBatch(ps []P)
	OpenBatch(ps []P, ok []bool)
}

// selfTestGCM seals the inputs of RFC 8998 App. A.1 (key, nonce, AAD and
// plaintext) with the GCM that newGCM makes, one-shot and in a batch, and
// checks the ciphertext and tag against ctHex and tagHex; the batch must
// open again.
func selfTestGCM[P gcmPacket, G selfTestGCMCipher[P]](newGCM func(key []byte) (G, error), ctHex, tagHex string) error {
	var (
		key   = unhex("0123456789abcdeffedcba9876543210")
		aad   = unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
		pt    = unhex("aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbccccccccccccccccddddddddddddddddeeeeeeeeeeeeeeeeffffffffffffffffeeeeeeeeeeeeeeeeaaaaaaaaaaaaaaaa")
		ct    = unhex(ctHex)
		tag   = unhex(tagHex)
		nonce [gcmNonceSize]byte
	)
	copy(nonce[:], unhex("00001234567800000000abcd"))
	g, err := newGCM(key)
	if err != nil {
		return err
	}
	var t [gcmTagSize]byte
	out := make([]byte, len(pt))
	g.Seal(out, &t, &nonce, pt, aad)
	if !bytes.Equal(out, ct) || !bytes.Equal(t[:], tag) {
		return errMismatch
	}
	// The batch path, which the suite uses, over enough copies to fill
	// the kernels' passes across packet boundaries.
	const n = 9
	var ps [n]P
	var tags [n][gcmTagSize]byte
	for i := range ps {
		ps[i] = P(gcmFields{Nonce: nonce, AAD: aad, Text: bytes.Clone(pt), Tag: &tags[i]})
	}
	g.SealBatch(ps[:])
	for i := range ps {
		if !bytes.Equal(gcmFields(ps[i]).Text, ct) || !bytes.Equal(tags[i][:], tag) {
			return fmt.Errorf("batch packet %d: %w", i, errMismatch)
		}
	}
	var ok [n]bool
	g.OpenBatch(ps[:], ok[:])
	for i := range ps {
		if !ok[i] || !bytes.Equal(gcmFields(ps[i]).Text, pt) {
			return fmt.Errorf("batch open of packet %d failed", i)
		}
	}
	return nil
}

func selfTestUBlockBlock() error {
	key := unhex("0123456789abcdeffedcba9876543210")
	c, err := ublock.NewCipher(key)
	if err != nil {
		return err
	}
	// Nine copies: the kernels' multi-block passes and a partial one.
	const n = 9
	want := unhex("32122bedd023c429023470e1158c147d")
	buf := bytes.Repeat(key, n) // the vector's plaintext equals its key
	c.EncryptBlocks(buf, buf)
	if !bytes.Equal(buf, bytes.Repeat(want, n)) {
		return errMismatch
	}
	c.DecryptBlocks(buf, buf)
	if !bytes.Equal(buf, bytes.Repeat(key, n)) {
		return fmt.Errorf("decryption: %w", errMismatch)
	}
	return nil
}

// noScratch runs the ZUC batch primitives on fresh memory.
var noScratch *zuc.Scratch

func selfTestEEA3() error {
	var key [zuc.KeySize128]byte
	copy(key[:], unhex("e5bd3ea0eb55ade866c6ac58bd54302a"))
	pt := unhex("14a8ef693d678507bbe7270a7f67ff5006c3525b9807e467c4e56000ba338f5d429559036751822246c80d3b38f07f4be2d8ff5805f5132229bde93bbbdcaf382bf1ee972fbf9977bada8945847a2a6c9ad34a667554e04d1f7fa2c33241bd8f01ba220d")
	ct := unhex("131d43e0dea1be5c5a1bfd971d852cbf712d7b4f57961fea3208afa8bca433f456ad09c7417e58bc69cf8866d1353f74865e80781d202dfb3ecff7fcbc3b190fe82a204ed0e350fc0f6f2613b2f2bca6df5a473a57a4a00d985ebad880d6f23864a07b01")
	var ivs [zuc.Lanes][zuc.IVSize128]byte
	var bufs [zuc.Lanes][]byte
	for i := range bufs {
		ivs[i] = zuc.IVEEA3(0x00056823, 24, 1)
		bufs[i] = bytes.Clone(pt)
	}
	noScratch.XORKeyStreams128(&key, &ivs, &bufs, zuc.Lanes)
	for i := range bufs {
		if !bytes.Equal(bufs[i], ct) {
			return fmt.Errorf("lane %d: %w", i, errMismatch)
		}
	}
	return nil
}

func selfTestEIA3() error {
	var key [zuc.KeySize128]byte
	copy(key[:], unhex("c9e6cec4607c72db000aefa88385ab0a"))
	var ivs [zuc.Lanes][zuc.IVSize128]byte
	var msgs [zuc.Lanes][]byte
	msg := make([]byte, 1420+HeaderSize)
	for i := range msg {
		msg[i] = byte(i*131 + 7)
	}
	for i := range msgs {
		ivs[i] = zuc.IVEIA3(0xa94059da+uint32(i), byte(i), uint8(i&1))
		msgs[i] = msg[:len(msg)-i*37]
	}
	var got, want [zuc.Lanes]uint32
	noScratch.EIA3Tags(&key, &ivs, &msgs, &got, zuc.Lanes)
	zuc.EIA3TagsGeneric(&key, &ivs, &msgs, &want, zuc.Lanes)
	if got != want {
		return errMismatch
	}
	return nil
}

func selfTestZUC256() error {
	for _, v := range []struct {
		fill   byte
		stream string
	}{
		{0x00, "58d03ad62e032ce2dafc683a39bdcb0352a2bc67f1b7de74163ce3a101ef55589639d75b95fa681b7f090df756391ccc903b7612744d544c17bc3fad8b163b0821787c0b97775bb84943c6bbe8ad8afd"},
		{0xff, "3356cbaed1a1c18b6baa4ffe343f777c9e15128f251ab65b949f7b26ef7157f296dd2fa9df95e3ee7a5be02ec32ba585505af316c2f9ded27cdbd935e441ce1115fd0a80bb7aef6768989416b8fac8c2"},
	} {
		want := unhex(v.stream)
		var key [zuc.KeySize256]byte
		var ivs [zuc.Lanes][zuc.IVSize256]byte
		var bufs [zuc.Lanes][]byte
		// Key and IV are all zeros or all ones; in the 23-byte IV packing
		// eight all-ones 6-bit symbols are six 0xff bytes.
		fill(key[:], v.fill)
		for i := range ivs {
			fill(ivs[i][:], v.fill)
			bufs[i] = make([]byte, len(want))
		}
		noScratch.XORKeyStreams256(&key, &ivs, &bufs, zuc.Lanes)
		for i := range bufs {
			if !bytes.Equal(bufs[i], want) {
				return fmt.Errorf("key/IV %#02x, lane %d: %w", v.fill, i, errMismatch)
			}
		}
	}
	return nil
}

func selfTestMAC256() error {
	var key [zuc.KeySize256]byte
	var ivs [zuc.Lanes][zuc.IVSize256]byte
	var msgs [zuc.Lanes][]byte
	msg := make([]byte, 50) // 400 zero bits
	for i := range msgs {
		msgs[i] = msg
	}
	var tags [zuc.Lanes][zuc.MAC256TagSize]byte
	noScratch.MAC256Tags(&key, &ivs, &msgs, &tags, zuc.Lanes)
	want := unhex("d85e54bbcb9600967084c952a1654b26")
	for i := range tags {
		if !bytes.Equal(tags[i][:], want) {
			return fmt.Errorf("lane %d: %w", i, errMismatch)
		}
	}
	return nil
}

// selfTestSuites seals a batch of 16 packets with every suite, checks that
// each packet sealed alone gives the same bytes (the batch and single
// paths of the kernels agree), and that the batch opens again.
func selfTestSuites() error {
	for _, id := range Suites {
		p := id.Params()
		k := DirectionKeys{Enc: make([]byte, p.EncKeySize), MAC: make([]byte, p.MACKeySize), Salt: make([]byte, p.SaltSize)}
		for i := range k.Enc {
			k.Enc[i] = byte(i + 1)
		}
		for i := range k.MAC {
			k.MAC[i] = byte(0x80 + i)
		}
		for i := range k.Salt {
			k.Salt[i] = byte(0x40 + i)
		}
		key, err := NewKey(id, k)
		if err != nil {
			return err
		}
		const n, size = 16, 1420
		var pkts [n][]byte
		for i := range pkts {
			b := make([]byte, HeaderSize+size, HeaderSize+size+MaxTagSize)
			b[0], b[1] = 0x14, 1
			binary.LittleEndian.PutUint64(b[CounterOffset:], uint64(1000+i))
			for j := HeaderSize; j < len(b); j++ {
				b[j] = byte(i ^ j)
			}
			pkts[i] = b
		}
		orig := make([][]byte, n)
		for i := range pkts {
			orig[i] = bytes.Clone(pkts[i])
		}
		if err := key.Seal(pkts[:]); err != nil {
			return err
		}
		for i := range pkts {
			one := [][]byte{append(make([]byte, 0, len(orig[i])+MaxTagSize), orig[i]...)}
			if err := key.Seal(one); err != nil {
				return err
			}
			if !bytes.Equal(one[0], pkts[i]) {
				return fmt.Errorf("%s: packet %d sealed in a batch differs from the same packet sealed alone", id, i)
			}
		}
		if m := key.Open(pkts[:]); m.Count() != n {
			return fmt.Errorf("%s: %d of %d sealed packets failed to open", id, n-m.Count(), n)
		}
		for i := range pkts {
			if !bytes.Equal(pkts[i], orig[i]) {
				return fmt.Errorf("%s: packet %d did not decrypt to its plaintext", id, i)
			}
		}
	}
	return nil
}

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}
