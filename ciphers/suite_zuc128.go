package ciphers

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/gmtun/gmtun/ciphers/internal/zuc"
)

// zuc128Key is the zuc-128 Key of one direction (docs/PROTOCOL.md, "Data
// packets", zuc-128): ciphertext = 128-EEA3(K_enc, COUNT, BEARER,
// DIRECTION, body) and tag = BE32(128-EIA3(K_mac, COUNT, BEARER,
// DIRECTION, header ‖ ciphertext)) with COUNT = c mod 2^32, BEARER =
// ⌊c/2^32⌋ mod 32 and DIRECTION the key's direction bit. It holds only the
// immutable keys and direction.
type zuc128Key struct {
	enc, mac  [zuc.KeySize128]byte
	direction uint8
	wiped     bool // set by Wipe; never concurrent with Seal/Open
}

const zuc128TagSize = 4

// newZUC128Key returns the zuc-128 Key for k. It copies the key material.
func newZUC128Key(k DirectionKeys) (Key, error) {
	if len(k.Enc) != zuc.KeySize128 || len(k.MAC) != zuc.KeySize128 || len(k.Salt) != 0 || k.Direction > 1 {
		return nil, fmt.Errorf("ciphers: zuc-128 needs 16-byte encryption and MAC keys, no salt and direction 0 or 1; got %d, %d, %d, %d",
			len(k.Enc), len(k.MAC), len(k.Salt), k.Direction)
	}
	key := &zuc128Key{direction: k.Direction}
	copy(key.enc[:], k.Enc)
	copy(key.mac[:], k.MAC)
	return key, nil
}

// Suite returns ZUC128.
func (k *zuc128Key) Suite() SuiteID { return ZUC128 }

// Wipe zeroes the encryption and MAC keys (see Key.Wipe).
func (k *zuc128Key) Wipe() {
	clear(k.enc[:])
	clear(k.mac[:])
	k.wiped = true
	runtime.KeepAlive(k)
}

// zuc128Params splits counter c (< 2^37) into the EEA3/EIA3 COUNT and
// BEARER.
func zuc128Params(c uint64) (count uint32, bearer uint8) {
	return uint32(c), uint8(c>>32) & 31
}

// zuc128IVs sets the 128-EEA3 and 128-EIA3 IVs of counter c: those of
// zuc.IVEEA3 and zuc.IVEIA3, built as 64-bit words (IV0..7 ‖ IV8..15,
// big-endian) instead of byte by byte.
func zuc128IVs(eea, eia *[zuc.IVSize128]byte, c uint64, direction uint8) {
	count, bearer := zuc128Params(c)
	d := uint64(direction)
	w := uint64(count)<<32 | uint64(bearer)<<27 // COUNT ‖ BEARER‖000 ‖ 0^24
	binary.BigEndian.PutUint64(eea[:8], w|d<<26)
	binary.BigEndian.PutUint64(eea[8:], w|d<<26)
	binary.BigEndian.PutUint64(eia[:8], w)
	binary.BigEndian.PutUint64(eia[8:], w^d<<63^d<<15) // IV8 ⊕= DIRECTION·2^7, IV14 = DIRECTION·2^7
}

// Seal encrypts and authenticates every packet of pkts in place (see
// Key.Seal); it validates the whole batch before touching any packet.
// Packets are grouped as in zuc-256 (sealZUCBatch); each group is sealed
// by EncryptThenMAC128 (128-EEA3 over the bodies, then 128-EIA3 over
// header ‖ ciphertext), the groups of a batch sharing one zuc.Scratch.
func (k *zuc128Key) Seal(pkts [][]byte) error { return sealZUCBatch(k, ZUC128, k.wiped, pkts) }

// Open verifies and decrypts in place the packets of pkts that
// authenticate (see Key.Open). A batch longer than MaxBatch opens nothing.
// Each group of well-formed packets is verified, then decrypted where its
// tags match (openZUC128Group).
func (k *zuc128Key) Open(pkts [][]byte) Mask { return openZUCBatch(k, ZUC128, k.wiped, pkts) }

// sealZUC128Group seals the validated packets selected by ord (at most
// zuc.Lanes; see lengthKey): 128-EEA3 over the body, then 128-EIA3 over
// header ‖ ciphertext into the 4-byte tag room.
func sealZUC128Group(k *zuc128Key, pkts [][]byte, ord []uint64, scr *zuc.Scratch) {
	var eea, eia [zuc.Lanes][zuc.IVSize128]byte
	var bodies, msgs [zuc.Lanes][]byte
	var tags [zuc.Lanes]uint32
	for j, key := range ord {
		pkt := pkts[lengthIndex(key)]
		zuc128IVs(&eea[j], &eia[j], Counter(pkt), k.direction)
		bodies[j], msgs[j] = pkt[HeaderSize:], pkt
	}
	scr.EncryptThenMAC128(&k.enc, &k.mac, &eea, &eia, &bodies, &msgs, &tags, len(ord))
	for j, key := range ord {
		i := lengthIndex(key)
		n := len(pkts[i])
		pkts[i] = pkts[i][:n+zuc128TagSize]
		binary.BigEndian.PutUint32(pkts[i][n:], tags[j])
	}
}

// openZUC128Group verifies the well-formed packets selected by ord (at
// most zuc.Lanes) and decrypts those whose tag matches (constant-time
// compare), re-slicing them to header ‖ plaintext and setting their bits
// in m (zuc.Scratch.VerifyThenDecrypt128). A packet's keystream may be
// generated before its tag is checked (one lane call for both, for a few
// packets), but it stays in the scratch memory: nothing is written to a
// packet before its tag has verified, and failing packets are not
// touched.
func openZUC128Group(k *zuc128Key, pkts [][]byte, ord []uint64, m *Mask, scr *zuc.Scratch) {
	var eea, eia [zuc.Lanes][zuc.IVSize128]byte
	var bodies, msgs [zuc.Lanes][]byte
	var want [zuc.Lanes]uint32
	for j, key := range ord {
		pkt := pkts[lengthIndex(key)]
		n := len(pkt) - zuc128TagSize
		zuc128IVs(&eea[j], &eia[j], Counter(pkt), k.direction)
		bodies[j], msgs[j] = pkt[HeaderSize:n], pkt[:n]
		want[j] = binary.BigEndian.Uint32(pkt[n:])
	}
	ok := scr.VerifyThenDecrypt128(&k.enc, &k.mac, &eea, &eia, &bodies, &msgs, &want, len(ord))
	for j, key := range ord {
		if ok&(1<<j) != 0 {
			i := lengthIndex(key)
			pkts[i] = pkts[i][:len(pkts[i])-zuc128TagSize]
			m.Set(i)
		}
	}
}
