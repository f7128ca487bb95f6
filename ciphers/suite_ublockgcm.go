package ciphers

import (
	"fmt"
	"runtime"

	"github.com/gmtun/gmtun/ciphers/internal/ublock"
)

// ublockgcmKey is the ublock-gcm Key of one direction (docs/PROTOCOL.md,
// "Data packets", ublock-gcm): GCM (SP 800-38D) over uBlock-128/128 with
// nonce = salt ⊕ (0^4 ‖ BE64(c)) and the 16-byte header as additional
// data, exactly as sm4-gcm with SM4 replaced by uBlock. It holds only the
// immutable key schedule and salt.
type ublockgcmKey struct {
	gcm   ublock.GCM
	salt  [ublock.NonceSize]byte
	wiped bool // set by Wipe; never concurrent with Seal/Open
}

// newUBlockGCMKey returns the ublock-gcm Key for k. It copies the key material.
func newUBlockGCMKey(k DirectionKeys) (Key, error) {
	if len(k.Enc) != ublock.KeySize128 || len(k.Salt) != ublock.NonceSize || len(k.MAC) != 0 {
		return nil, fmt.Errorf("ciphers: ublock-gcm needs a 16-byte key, a 12-byte salt and no MAC key; got %d, %d, %d",
			len(k.Enc), len(k.Salt), len(k.MAC))
	}
	key := new(ublockgcmKey)
	if err := key.gcm.Init(k.Enc); err != nil {
		return nil, err
	}
	copy(key.salt[:], k.Salt)
	return key, nil
}

// Suite returns UBlockGCM.
func (k *ublockgcmKey) Suite() SuiteID { return UBlockGCM }

// Seal seals every packet of pkts in place (see Key.Seal); it validates
// the whole batch before touching any packet.
func (k *ublockgcmKey) Seal(pkts [][]byte) error {
	if k.wiped {
		return errWiped
	}
	p := UBlockGCM.Params()
	if err := checkSeal(pkts, &p); err != nil {
		return err
	}
	sealUBlockGCMBatch(&k.gcm, &k.salt, pkts)
	return nil
}

// Open verifies and decrypts in place the packets of pkts that
// authenticate (see Key.Open). A batch longer than MaxBatch opens nothing.
func (k *ublockgcmKey) Open(pkts [][]byte) Mask {
	var m Mask
	if len(pkts) <= MaxBatch && !k.wiped {
		openUBlockGCMBatch(&k.gcm, &k.salt, pkts, &m)
	}
	return m
}

// Wipe zeroes the uBlock round keys (both layouts), both GHASH key forms
// and the salt (see Key.Wipe).
func (k *ublockgcmKey) Wipe() {
	k.gcm = ublock.GCM{}
	clear(k.salt[:])
	k.wiped = true
	runtime.KeepAlive(k)
}

// sealUBlockGCMBatch seals a validated batch (at most MaxBatch packets) with
// one call into the batch GCM, which shares kernel passes across packets.
// The descriptor array is sized to the batch (see smallBatch).
func sealUBlockGCMBatch(g *ublock.GCM, salt *[ublock.NonceSize]byte, pkts [][]byte) {
	switch {
	case len(pkts) == 1:
		var ps [1]ublock.Packet
		sealUBlockGCMInto(g, salt, pkts, ps[:])
	case len(pkts) <= smallBatch:
		var ps [smallBatch]ublock.Packet
		sealUBlockGCMInto(g, salt, pkts, ps[:len(pkts)])
	default:
		var ps [MaxBatch]ublock.Packet
		sealUBlockGCMInto(g, salt, pkts, ps[:len(pkts)])
	}
}

// sealUBlockGCMInto describes pkts in ps (len(ps) == len(pkts)) and seals them.
func sealUBlockGCMInto(g *ublock.GCM, salt *[ublock.NonceSize]byte, pkts [][]byte, ps []ublock.Packet) {
	for i, pkt := range pkts {
		n := len(pkt)
		pkt = pkt[:n+ublock.TagSize]
		p := &ps[i]
		sm4gcmNonce(&p.Nonce, salt, Counter(pkt)) // the nonce of sm4-gcm
		p.AAD, p.Text, p.Tag = pkt[:HeaderSize], pkt[HeaderSize:n], (*[ublock.TagSize]byte)(pkt[n:])
		pkts[i] = pkt
	}
	g.SealBatch(ps)
}

// openUBlockGCMBatch opens a batch of at most MaxBatch packets, setting the
// bit in m of each packet that verified (and only then was decrypted).
// Packets too short for a tag or with a counter at the limit are left out
// of the batch. The scratch arrays are sized to the batch (see smallBatch).
func openUBlockGCMBatch(g *ublock.GCM, salt *[ublock.NonceSize]byte, pkts [][]byte, m *Mask) {
	switch {
	case len(pkts) == 1:
		var ps [1]ublock.Packet
		var index [1]uint8
		var ok [1]bool
		openUBlockGCMInto(g, salt, pkts, m, ps[:], index[:], ok[:])
	case len(pkts) <= smallBatch:
		var ps [smallBatch]ublock.Packet
		var index [smallBatch]uint8
		var ok [smallBatch]bool
		openUBlockGCMInto(g, salt, pkts, m, ps[:], index[:], ok[:])
	default:
		var ps [MaxBatch]ublock.Packet
		var index [MaxBatch]uint8
		var ok [MaxBatch]bool
		openUBlockGCMInto(g, salt, pkts, m, ps[:], index[:], ok[:])
	}
}

// openUBlockGCMInto opens pkts with the scratch ps, index and ok (each at
// least len(pkts) long); see openUBlockGCMBatch.
func openUBlockGCMInto(g *ublock.GCM, salt *[ublock.NonceSize]byte, pkts [][]byte, m *Mask, ps []ublock.Packet, index []uint8, ok []bool) {
	const maxCounter = 1<<64 - 1<<13 - 1 // UBlockGCM.Params().MaxCounter
	n := 0
	for i, pkt := range pkts {
		if len(pkt) < HeaderSize+ublock.TagSize {
			continue
		}
		c := Counter(pkt)
		if c >= maxCounter {
			continue
		}
		end := len(pkt) - ublock.TagSize
		p := &ps[n]
		sm4gcmNonce(&p.Nonce, salt, c)
		p.AAD, p.Text, p.Tag = pkt[:HeaderSize], pkt[HeaderSize:end], (*[ublock.TagSize]byte)(pkt[end:])
		index[n] = uint8(i)
		n++
	}
	g.OpenBatch(ps[:n], ok[:n])
	for j := range n {
		if ok[j] {
			i := int(index[j])
			pkts[i] = pkts[i][:len(pkts[i])-ublock.TagSize]
			m.Set(i)
		}
	}
}
