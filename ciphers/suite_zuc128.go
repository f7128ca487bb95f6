package ciphers

import (
	"crypto/subtle"
	"encoding/binary"
	"fmt"

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

// zuc128Params splits counter c (< 2^37) into the EEA3/EIA3 COUNT and
// BEARER.
func zuc128Params(c uint64) (count uint32, bearer uint8) {
	return uint32(c), uint8(c>>32) & 31
}

// zuc128IVs sets the 128-EEA3 and 128-EIA3 IVs of counter c.
func zuc128IVs(eea, eia *[zuc.IVSize128]byte, c uint64, direction uint8) {
	count, bearer := zuc128Params(c)
	*eea = zuc.IVEEA3(count, bearer, direction)
	*eia = zuc.IVEIA3(count, bearer, direction)
}

// Seal encrypts and authenticates every packet of pkts in place (see
// Key.Seal); it validates the whole batch before touching any packet.
func (k *zuc128Key) Seal(pkts [][]byte) error {
	p := ZUC128.Params()
	if err := checkSeal(pkts, &p); err != nil {
		return err
	}
	var eea, eia [zucLanes][zuc.IVSize128]byte
	for len(pkts) > 0 {
		n := min(len(pkts), zucLanes)
		for i, pkt := range pkts[:n] {
			zuc128IVs(&eea[i], &eia[i], Counter(pkt), k.direction)
		}
		sealZUC128LanesGeneric(k, &eea, &eia, pkts[:n])
		pkts = pkts[n:]
	}
	return nil
}

// Open verifies and decrypts in place the packets of pkts that
// authenticate (see Key.Open). A batch longer than MaxBatch opens nothing.
func (k *zuc128Key) Open(pkts [][]byte) Mask {
	var m Mask
	if len(pkts) > MaxBatch {
		return m
	}
	maxCounter := ZUC128.Params().MaxCounter
	var eea, eia [zucLanes][zuc.IVSize128]byte
	for base := 0; base < len(pkts); base += zucLanes {
		group := pkts[base:min(len(pkts), base+zucLanes)]
		var valid uint32
		for i, pkt := range group {
			if len(pkt) >= HeaderSize+zuc128TagSize && Counter(pkt) < maxCounter {
				zuc128IVs(&eea[i], &eia[i], Counter(pkt), k.direction)
				valid |= 1 << i
			}
		}
		ok := openZUC128LanesGeneric(k, &eea, &eia, group, valid)
		for i := range group {
			if ok&(1<<i) != 0 {
				m.Set(base + i)
			}
		}
	}
	return m
}

// sealZUC128LanesGeneric seals up to zucLanes validated packets: 128-EEA3
// over the body with eea[i], then 128-EIA3 over header ‖ ciphertext with
// eia[i] into the 4-byte tag room. It is the seam a multi-lane kernel
// replaces (EEA3 and EIA3 lanes of the same packets together).
func sealZUC128LanesGeneric(k *zuc128Key, eea, eia *[zucLanes][zuc.IVSize128]byte, pkts [][]byte) {
	var st zuc.State
	for i, pkt := range pkts {
		n := len(pkt)
		pkt = pkt[:n+zuc128TagSize]
		body := pkt[HeaderSize:n]
		st.Init128(&k.enc, &eea[i])
		zuc.XORKeyStreamGeneric(&st, body, body)
		st.Init128(&k.mac, &eia[i])
		binary.BigEndian.PutUint32(pkt[n:], zuc.EIA3Generic(&st, pkt[:n], 8*n))
		pkts[i] = pkt
	}
}

// openZUC128LanesGeneric verifies the packets whose bit is set in valid
// and decrypts those whose tag matches (constant-time compare), re-slicing
// them to header ‖ plaintext. No keystream is generated for a packet
// before its tag has verified; failing packets are not touched. It returns
// the bits of the packets opened.
func openZUC128LanesGeneric(k *zuc128Key, eea, eia *[zucLanes][zuc.IVSize128]byte, pkts [][]byte, valid uint32) (ok uint32) {
	var st zuc.State
	for i, pkt := range pkts {
		if valid&(1<<i) == 0 {
			continue
		}
		n := len(pkt) - zuc128TagSize
		st.Init128(&k.mac, &eia[i])
		var tag [zuc128TagSize]byte
		binary.BigEndian.PutUint32(tag[:], zuc.EIA3Generic(&st, pkt[:n], 8*n))
		if subtle.ConstantTimeCompare(tag[:], pkt[n:]) != 1 {
			continue
		}
		body := pkt[HeaderSize:n]
		st.Init128(&k.enc, &eea[i])
		zuc.XORKeyStreamGeneric(&st, body, body)
		pkts[i] = pkt[:n]
		ok |= 1 << i
	}
	return ok
}
