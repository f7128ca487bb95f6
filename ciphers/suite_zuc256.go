package ciphers

import (
	"crypto/subtle"
	"encoding/binary"
	"fmt"

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
}

const (
	zuc256SaltSize = 9
	zuc256TagSize  = 16
	// zucLanes is the number of packets the batch loops hand to one lane
	// group: the width of the widest multi-lane kernel (16 × 32-bit lanes
	// of AVX-512).
	zucLanes = 16
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

// Seal encrypts and authenticates every packet of pkts in place (see
// Key.Seal); it validates the whole batch before touching any packet.
func (k *zuc256Key) Seal(pkts [][]byte) error {
	p := ZUC256.Params()
	if err := checkSeal(pkts, &p); err != nil {
		return err
	}
	var ivs [zucLanes][zuc.IVSize256]byte
	for len(pkts) > 0 {
		n := min(len(pkts), zucLanes)
		for i, pkt := range pkts[:n] {
			zuc256IV(&ivs[i], &k.salt, Counter(pkt))
		}
		sealZUC256LanesGeneric(k, &ivs, pkts[:n])
		pkts = pkts[n:]
	}
	return nil
}

// Open verifies and decrypts in place the packets of pkts that
// authenticate (see Key.Open). A batch longer than MaxBatch opens nothing.
func (k *zuc256Key) Open(pkts [][]byte) Mask {
	var m Mask
	if len(pkts) > MaxBatch {
		return m
	}
	maxCounter := ZUC256.Params().MaxCounter
	var ivs [zucLanes][zuc.IVSize256]byte
	for base := 0; base < len(pkts); base += zucLanes {
		group := pkts[base:min(len(pkts), base+zucLanes)]
		var valid uint32 // lanes holding a well-formed packet
		for i, pkt := range group {
			if len(pkt) >= HeaderSize+zuc256TagSize && Counter(pkt) < maxCounter {
				zuc256IV(&ivs[i], &k.salt, Counter(pkt))
				valid |= 1 << i
			}
		}
		ok := openZUC256LanesGeneric(k, &ivs, group, valid)
		for i := range group {
			if ok&(1<<i) != 0 {
				m.Set(base + i)
			}
		}
	}
	return m
}

// zuc256IV sets iv to the zuc-256 IV of counter c: IV0..IV7 = BE64(c),
// IV8..IV16 = salt, IV17..IV24 = 0, in the 23-byte packing.
func zuc256IV(iv *[zuc.IVSize256]byte, salt *[zuc256SaltSize]byte, c uint64) {
	binary.BigEndian.PutUint64(iv[:8], c)
	copy(iv[8:17], salt[:])
	clear(iv[17:])
}

// sealZUC256LanesGeneric seals up to zucLanes validated packets, packet i
// with IV ivs[i]: keystream over the body, then the 128-bit MAC over
// header ‖ ciphertext into the tag room. It is the seam a multi-lane
// kernel replaces (one IV per lane; the cipher lanes and the MAC lanes of
// the same packets).
func sealZUC256LanesGeneric(k *zuc256Key, ivs *[zucLanes][zuc.IVSize256]byte, pkts [][]byte) {
	dKS, _ := zuc.D256(0)
	dMAC, _ := zuc.D256(zuc256TagSize)
	var st zuc.State
	for i, pkt := range pkts {
		n := len(pkt)
		pkt = pkt[:n+zuc256TagSize]
		body := pkt[HeaderSize:n]
		st.Init256(&k.enc, &ivs[i], &dKS)
		zuc.XORKeyStreamGeneric(&st, body, body)
		st.Init256(&k.mac, &ivs[i], &dMAC)
		zuc.MAC256Generic(&st, pkt[:n], 8*n, pkt[n:])
		pkts[i] = pkt
	}
}

// openZUC256LanesGeneric verifies the packets of pkts whose bit is set in
// valid and decrypts those whose tag matches (constant-time compare),
// re-slicing them to header ‖ plaintext. No keystream is generated for a
// packet before its tag has verified; failing packets are not touched. It
// returns the bits of the packets opened.
func openZUC256LanesGeneric(k *zuc256Key, ivs *[zucLanes][zuc.IVSize256]byte, pkts [][]byte, valid uint32) (ok uint32) {
	dKS, _ := zuc.D256(0)
	dMAC, _ := zuc.D256(zuc256TagSize)
	var st zuc.State
	var tag [zuc256TagSize]byte
	for i, pkt := range pkts {
		if valid&(1<<i) == 0 {
			continue
		}
		n := len(pkt) - zuc256TagSize
		st.Init256(&k.mac, &ivs[i], &dMAC)
		zuc.MAC256Generic(&st, pkt[:n], 8*n, tag[:])
		if subtle.ConstantTimeCompare(tag[:], pkt[n:]) != 1 {
			continue
		}
		body := pkt[HeaderSize:n]
		st.Init256(&k.enc, &ivs[i], &dKS)
		zuc.XORKeyStreamGeneric(&st, body, body)
		pkts[i] = pkt[:n]
		ok |= 1 << i
	}
	return ok
}
