package ciphers

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/gmtun/gmtun/ciphers/internal/sm4"
)

// sm4gcmKey is the sm4-gcm Key of one direction (docs/PROTOCOL.md, "Data
// packets", sm4-gcm): AEAD_SM4_GCM of RFC 8998 with
// nonce = salt ⊕ (0^4 ‖ BE64(c)) and the 16-byte header as additional
// data. It holds only the immutable key schedule and salt.
type sm4gcmKey struct {
	gcm   sm4.GCM
	salt  [sm4.NonceSize]byte
	wiped bool // set by Wipe; never concurrent with Seal/Open
}

// newSM4GCMKey returns the sm4-gcm Key for k. It copies the key material.
func newSM4GCMKey(k DirectionKeys) (Key, error) {
	if len(k.Enc) != sm4.KeySize || len(k.Salt) != sm4.NonceSize || len(k.MAC) != 0 {
		return nil, fmt.Errorf("ciphers: sm4-gcm needs a 16-byte key, a 12-byte salt and no MAC key; got %d, %d, %d",
			len(k.Enc), len(k.Salt), len(k.MAC))
	}
	key := new(sm4gcmKey)
	if err := key.gcm.Init(k.Enc); err != nil {
		return nil, err
	}
	copy(key.salt[:], k.Salt)
	return key, nil
}

// Suite returns SM4GCM.
func (k *sm4gcmKey) Suite() SuiteID { return SM4GCM }

// Seal seals every packet of pkts in place (see Key.Seal); it validates
// the whole batch before touching any packet.
func (k *sm4gcmKey) Seal(pkts [][]byte) error {
	if k.wiped {
		return errWiped
	}
	p := SM4GCM.Params()
	if err := checkSeal(pkts, &p); err != nil {
		return err
	}
	sealSM4GCMBatch(&k.gcm, &k.salt, pkts)
	return nil
}

// Open verifies and decrypts in place the packets of pkts that
// authenticate (see Key.Open). A batch longer than MaxBatch opens nothing.
func (k *sm4gcmKey) Open(pkts [][]byte) Mask {
	var m Mask
	if len(pkts) <= MaxBatch && !k.wiped {
		openSM4GCMBatch(&k.gcm, &k.salt, pkts, &m)
	}
	return m
}

// Wipe zeroes the SM4 round keys, both GHASH key forms and the salt (see
// Key.Wipe).
func (k *sm4gcmKey) Wipe() {
	k.gcm = sm4.GCM{}
	clear(k.salt[:])
	k.wiped = true
	runtime.KeepAlive(k)
}

// sm4gcmNonce sets nonce = salt ⊕ (0^4 ‖ BE64(c)), the TLS 1.3
// construction of docs/PROTOCOL.md.
func sm4gcmNonce(nonce, salt *[sm4.NonceSize]byte, c uint64) {
	*nonce = *salt
	binary.BigEndian.PutUint64(nonce[4:], binary.BigEndian.Uint64(salt[4:])^c)
}

// smallBatch is the largest batch whose packet descriptors live in a
// small stack array: every call zeroes the array it declares, and a
// MaxBatch one is about 9 KiB, more than sealing a short packet costs.
const smallBatch = 8

// sealSM4GCMBatch seals a validated batch (at most MaxBatch packets) with
// one call into the batch GCM, which shares kernel passes across packets.
// The descriptor array is sized to the batch (see smallBatch).
func sealSM4GCMBatch(g *sm4.GCM, salt *[sm4.NonceSize]byte, pkts [][]byte) {
	switch {
	case len(pkts) == 1:
		var ps [1]sm4.Packet
		sealSM4GCMInto(g, salt, pkts, ps[:])
	case len(pkts) <= smallBatch:
		var ps [smallBatch]sm4.Packet
		sealSM4GCMInto(g, salt, pkts, ps[:len(pkts)])
	default:
		var ps [MaxBatch]sm4.Packet
		sealSM4GCMInto(g, salt, pkts, ps[:len(pkts)])
	}
}

// sealSM4GCMInto describes pkts in ps (len(ps) == len(pkts)) and seals them.
func sealSM4GCMInto(g *sm4.GCM, salt *[sm4.NonceSize]byte, pkts [][]byte, ps []sm4.Packet) {
	for i, pkt := range pkts {
		n := len(pkt)
		pkt = pkt[:n+sm4.TagSize]
		p := &ps[i]
		sm4gcmNonce(&p.Nonce, salt, Counter(pkt))
		p.AAD, p.Text, p.Tag = pkt[:HeaderSize], pkt[HeaderSize:n], (*[sm4.TagSize]byte)(pkt[n:])
		pkts[i] = pkt
	}
	g.SealBatch(ps)
}

// openSM4GCMBatch opens a batch of at most MaxBatch packets, setting the
// bit in m of each packet that verified (and only then was decrypted).
// Packets too short for a tag or with a counter at the limit are left out
// of the batch. The scratch arrays are sized to the batch (see smallBatch).
func openSM4GCMBatch(g *sm4.GCM, salt *[sm4.NonceSize]byte, pkts [][]byte, m *Mask) {
	switch {
	case len(pkts) == 1:
		var ps [1]sm4.Packet
		var index [1]uint8
		var ok [1]bool
		openSM4GCMInto(g, salt, pkts, m, ps[:], index[:], ok[:])
	case len(pkts) <= smallBatch:
		var ps [smallBatch]sm4.Packet
		var index [smallBatch]uint8
		var ok [smallBatch]bool
		openSM4GCMInto(g, salt, pkts, m, ps[:], index[:], ok[:])
	default:
		var ps [MaxBatch]sm4.Packet
		var index [MaxBatch]uint8
		var ok [MaxBatch]bool
		openSM4GCMInto(g, salt, pkts, m, ps[:], index[:], ok[:])
	}
}

// openSM4GCMInto opens pkts with the scratch ps, index and ok (each at
// least len(pkts) long); see openSM4GCMBatch.
func openSM4GCMInto(g *sm4.GCM, salt *[sm4.NonceSize]byte, pkts [][]byte, m *Mask, ps []sm4.Packet, index []uint8, ok []bool) {
	const maxCounter = 1<<64 - 1<<13 - 1 // SM4GCM.Params().MaxCounter
	n := 0
	for i, pkt := range pkts {
		if len(pkt) < HeaderSize+sm4.TagSize {
			continue
		}
		c := Counter(pkt)
		if c >= maxCounter {
			continue
		}
		end := len(pkt) - sm4.TagSize
		p := &ps[n]
		sm4gcmNonce(&p.Nonce, salt, c)
		p.AAD, p.Text, p.Tag = pkt[:HeaderSize], pkt[HeaderSize:end], (*[sm4.TagSize]byte)(pkt[end:])
		index[n] = uint8(i)
		n++
	}
	g.OpenBatch(ps[:n], ok[:n])
	for j := range n {
		if ok[j] {
			i := int(index[j])
			pkts[i] = pkts[i][:len(pkts[i])-sm4.TagSize]
			m.Set(i)
		}
	}
}
