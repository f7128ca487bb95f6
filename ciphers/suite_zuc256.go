package ciphers

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/gmtun/gmtun/ciphers/internal/zuc"
)

// zuc256Key is the zuc-256 Key of one direction (docs/PROTOCOL.md, "Data
// packets", zuc-256): ciphertext = body ⊕ ZUC-256(K_enc, IV) and tag =
// ZUC-256-MAC-128(K_mac, IV, header ‖ ciphertext), both with the 2018
// initialisation and IV = BE64(c) ‖ salt ‖ 0^6 (23-byte packing). It holds
// only the immutable keys and salt.
type zuc256Key struct {
	enc, mac [zuc.KeySize256]byte
	salt     [zuc256SaltSize]byte
	wiped    bool // set by Wipe; never concurrent with Seal/Open
}

const (
	zuc256SaltSize = 9
	zuc256TagSize  = zuc.MAC256TagSize
)

// newZUC256Key returns the zuc-256 Key for k. It copies the key material.
func newZUC256Key(k DirectionKeys) (Key, error) {
	if len(k.Enc) != zuc.KeySize256 || len(k.MAC) != zuc.KeySize256 || len(k.Salt) != zuc256SaltSize {
		return nil, fmt.Errorf("ciphers: zuc-256 needs 32-byte encryption and MAC keys and a 9-byte salt; got %d, %d, %d",
			len(k.Enc), len(k.MAC), len(k.Salt))
	}
	key := new(zuc256Key)
	copy(key.enc[:], k.Enc)
	copy(key.mac[:], k.MAC)
	copy(key.salt[:], k.Salt)
	return key, nil
}

// Suite returns ZUC256.
func (k *zuc256Key) Suite() SuiteID { return ZUC256 }

// Wipe zeroes the encryption and MAC keys (see Key.Wipe).
func (k *zuc256Key) Wipe() {
	clear(k.enc[:])
	clear(k.mac[:])
	clear(k.salt[:])
	k.wiped = true
	runtime.KeepAlive(k)
}

// Seal encrypts and authenticates every packet of pkts in place (see
// Key.Seal); it validates the whole batch before touching any packet.
// Packets are taken in groups of zuc.Lanes of similar length
// (sealZUCBatch); each group is sealed by EncryptThenMAC256 (keystream
// over the bodies, then the MAC over header ‖ ciphertext), the groups of
// a batch sharing one zuc.Scratch.
func (k *zuc256Key) Seal(pkts [][]byte) error { return sealZUCBatch(k, ZUC256, k.wiped, pkts) }

// Open verifies and decrypts in place the packets of pkts that
// authenticate (see Key.Open). A batch longer than MaxBatch opens nothing.
// Well-formed packets are grouped as in Seal; each group is verified, then
// decrypted where its tags match (openZUC256Group).
func (k *zuc256Key) Open(pkts [][]byte) Mask { return openZUCBatch(k, ZUC256, k.wiped, pkts) }

// zuc256IV sets iv to the zuc-256 IV of counter c: IV0..IV7 = BE64(c),
// IV8..IV16 = salt, IV17..IV24 = 0, in the 23-byte packing.
func zuc256IV(iv *[zuc.IVSize256]byte, salt *[zuc256SaltSize]byte, c uint64) {
	binary.BigEndian.PutUint64(iv[:8], c)
	copy(iv[8:17], salt[:])
	clear(iv[17:])
}

// sealZUC256Group seals the validated packets pkts[lengthIndex(key)] for
// the keys of ord (at most zuc.Lanes), lane j with the IV of its counter:
// keystream over the body, then the 128-bit MAC over header ‖ ciphertext
// into the tag room.
func sealZUC256Group(k *zuc256Key, pkts [][]byte, ord []uint64, scr *zuc.Scratch) {
	var ivs [zuc.Lanes][zuc.IVSize256]byte
	var bodies, msgs [zuc.Lanes][]byte
	var tags [zuc.Lanes][zuc256TagSize]byte
	for j, key := range ord {
		pkt := pkts[lengthIndex(key)]
		zuc256IV(&ivs[j], &k.salt, Counter(pkt))
		bodies[j], msgs[j] = pkt[HeaderSize:], pkt
	}
	scr.EncryptThenMAC256(&k.enc, &k.mac, &ivs, &bodies, &msgs, &tags, len(ord))
	for j, key := range ord {
		i := lengthIndex(key)
		n := len(pkts[i])
		pkts[i] = pkts[i][:n+zuc256TagSize]
		copy(pkts[i][n:], tags[j][:])
	}
}

// openZUC256Group verifies the well-formed packets selected by ord (at
// most zuc.Lanes) and decrypts those whose tag matches (constant-time
// compare), re-slicing them to header ‖ plaintext and setting their bits
// in m (zuc.Scratch.VerifyThenDecrypt256; as in openZUC128Group, nothing
// is written to a packet before its tag has verified, and failing
// packets are not touched).
func openZUC256Group(k *zuc256Key, pkts [][]byte, ord []uint64, m *Mask, scr *zuc.Scratch) {
	var ivs [zuc.Lanes][zuc.IVSize256]byte
	var bodies, msgs [zuc.Lanes][]byte
	var want [zuc.Lanes][zuc256TagSize]byte
	for j, key := range ord {
		pkt := pkts[lengthIndex(key)]
		n := len(pkt) - zuc256TagSize
		zuc256IV(&ivs[j], &k.salt, Counter(pkt))
		bodies[j], msgs[j] = pkt[HeaderSize:n], pkt[:n]
		copy(want[j][:], pkt[n:])
	}
	ok := scr.VerifyThenDecrypt256(&k.enc, &k.mac, &ivs, &bodies, &msgs, &want, len(ord))
	for j, key := range ord {
		if ok&(1<<j) != 0 {
			i := lengthIndex(key)
			pkts[i] = pkts[i][:len(pkts[i])-zuc256TagSize]
			m.Set(i)
		}
	}
}
