package ciphers

import (
	"slices"

	"github.com/gmtun/gmtun/ciphers/internal/zuc"
)

// The zuc family: zuc-128 and zuc-256 seal and open a batch the same way
// (docs/PROTOCOL.md, "Data packets"): the packets are ordered by length
// (lengthOrder) and taken zuc.Lanes at a time, longest first, so that the
// lanes of one kernel call run similar lengths, all groups of a batch
// sharing one zuc.Scratch. sealZUCBatch and openZUCBatch are that driver,
// once; each suite's group functions (sealZUC128Group, openZUC256Group, …)
// build its IVs and tags and call its kernels.
//
// The group functions are reached through a type switch on the concrete
// key, not through a method of the type parameter: Go calls such a method
// through the generic dictionary, which escape analysis cannot see
// through, so the batch's order keys and mask would move to the heap.

// zucKey is the Key of a zuc-family suite.
type zucKey interface{ *zuc128Key | *zuc256Key }

// sealZUCBatch seals pkts with k, the Key of suite id (see Key.Seal); it
// validates the whole batch before touching any packet. wiped is k's
// wiped flag.
func sealZUCBatch[K zucKey](k K, id SuiteID, wiped bool, pkts [][]byte) error {
	if wiped {
		return errWiped
	}
	p := id.Params()
	if err := checkSeal(pkts, &p); err != nil {
		return err
	}
	var keys [MaxBatch]uint64
	ord := keys[:0]
	for i, pkt := range pkts {
		ord = append(ord, lengthKey(len(pkt), i))
	}
	runZUCGroups(k, pkts, ord, nil)
	return nil
}

// openZUCBatch verifies and decrypts in place the packets of pkts that
// authenticate under k, the Key of suite id (see Key.Open); wiped is k's
// wiped flag. A batch longer than MaxBatch opens nothing. The well-formed
// packets are grouped as in sealZUCBatch; each group is verified, then
// decrypted where its tags match.
func openZUCBatch[K zucKey](k K, id SuiteID, wiped bool, pkts [][]byte) Mask {
	var m Mask
	if len(pkts) > MaxBatch || wiped {
		return m
	}
	p := id.Params()
	var keys [MaxBatch]uint64
	ord := keys[:0]
	for i, pkt := range pkts {
		if len(pkt) >= HeaderSize+p.TagSize && Counter(pkt) < p.MaxCounter {
			ord = append(ord, lengthKey(len(pkt), i))
		}
	}
	runZUCGroups(k, pkts, ord, &m)
	return m
}

// runZUCGroups sorts the lengthKeys ord of pkts (lengthOrder) and hands
// them to k's group functions zuc.Lanes at a time, longest first, the
// groups sharing one zuc.Scratch: it seals the packets if m is nil and
// opens them, setting their bits in m, otherwise. Seal and Open group a
// batch the same way.
func runZUCGroups[K zucKey](k K, pkts [][]byte, ord []uint64, m *Mask) {
	lengthOrder(ord)
	var scr *zuc.Scratch // nil: each primitive takes only what its call needs
	if len(ord) > zuc.Lanes {
		scr = new(zuc.Scratch) // shared by the groups, zeroed once per batch
	}
	for end := len(ord); end > 0; end -= zuc.Lanes {
		group := ord[max(0, end-zuc.Lanes):end]
		switch k := any(k).(type) {
		case *zuc128Key:
			if m == nil {
				sealZUC128Group(k, pkts, group, scr)
			} else {
				openZUC128Group(k, pkts, group, m, scr)
			}
		case *zuc256Key:
			if m == nil {
				sealZUC256Group(k, pkts, group, scr)
			} else {
				openZUC256Group(k, pkts, group, m, scr)
			}
		}
	}
}

// lengthKey packs a packet length and batch position into a sort key.
func lengthKey(length, i int) uint64 { return uint64(length)<<8 | uint64(i) }

// lengthIndex returns the batch position of a lengthKey.
func lengthIndex(key uint64) int { return int(key & 0xff) }

// lengthOrder sorts the keys of a batch by packet length (then position)
// unless they already are, as with the equal-sized segments of one TSO
// burst. The zuc suites hand zuc.Lanes consecutive keys, longest first, to
// one lane call, so lanes run similar lengths and the last, partial group
// holds the shortest packets (a lone one runs single-lane).
func lengthOrder(keys []uint64) {
	for i := 1; i < len(keys); i++ {
		if keys[i]>>8 < keys[i-1]>>8 {
			slices.Sort(keys)
			return
		}
	}
}
