// Package allowedips implements cryptokey routing: a longest-prefix-match
// table from IP prefixes (a peer's AllowedIPs) to a value, typically the peer.
//
// The outbound path looks up a packet's destination address to choose the
// peer; the inbound path looks up the decrypted packet's source address and
// drops the packet unless the result is the peer whose key authenticated it
// (the "cryptokey routing" rule of the WireGuard whitepaper §2).
//
// The table is a path-compressed binary trie per address family. Keys are
// held as two 64-bit words so that matching a node is two XOR/AND pairs and
// finding the next branch is one shift, and lookups never allocate.
package allowedips

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"sync"
	"sync/atomic"
)

// key is an address as a 128-bit big-endian number. IPv4 addresses occupy
// the top 32 bits of hi, so bit i of the address is bit i of the key.
type key struct{ hi, lo uint64 }

func keyFromAddr(a netip.Addr) key {
	if a.Is4() {
		b := a.As4()
		return key{hi: uint64(binary.BigEndian.Uint32(b[:])) << 32}
	}
	b := a.As16()
	return key{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:])}
}

func (k key) addr(is4 bool) netip.Addr {
	if is4 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(k.hi>>32))
		return netip.AddrFrom4(b)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], k.hi)
	binary.BigEndian.PutUint64(b[8:], k.lo)
	return netip.AddrFrom16(b)
}

// maskOf returns the mask selecting the first n bits of a key.
func maskOf(n uint8) key {
	switch {
	case n == 0:
		return key{}
	case n <= 64:
		return key{hi: ^uint64(0) << (64 - n)}
	default:
		return key{hi: ^uint64(0), lo: ^uint64(0) << (128 - n)}
	}
}

func (k key) and(m key) key { return key{k.hi & m.hi, k.lo & m.lo} }

// bit returns bit i (0 = most significant) of k; i < 128.
func (k key) bit(i uint8) uint8 {
	if i < 64 {
		return uint8(k.hi>>(63-i)) & 1
	}
	return uint8(k.lo>>(127-i)) & 1
}

// commonBits returns the length of the common prefix of a and b (0..128).
func commonBits(a, b key) uint8 {
	if x := a.hi ^ b.hi; x != 0 {
		return uint8(bits.LeadingZeros64(x))
	}
	return 64 + uint8(bits.LeadingZeros64(a.lo^b.lo))
}

// node is a trie node. It carries a value only if has is set; nodes without
// a value are branch points created by path compression and always have two
// children.
type node[T comparable] struct {
	key   key // prefix bits, masked to length bits
	mask  key // maskOf(length), cached for Lookup
	bits  uint8
	has   bool
	child [2]*node[T]
	value T
}

// Table maps IP prefixes to values of type T and answers longest-prefix
// lookups. The zero value is an empty table ready to use.
//
// A Table is safe for concurrent use: lookups take a read lock and may run
// in parallel with each other; mutations take the write lock. A table
// published for the data plane is frozen first (Freeze): it can no longer
// change, so its lookups take no lock and write no shared cache line.
type Table[T comparable] struct {
	mu     sync.RWMutex
	frozen atomic.Bool
	root4  *node[T]
	root6  *node[T]
	n      int
}

// Freeze makes t read-only: every later mutation panics, and lookups no
// longer take the read lock (two atomic read-modify-writes on a cache line
// every reader shares). Freeze a table before publishing it to readers on
// other goroutines (the publication, e.g. an atomic pointer store, orders
// the freeze before their lookups).
func (t *Table[T]) Freeze() {
	t.mu.Lock()
	t.frozen.Store(true)
	t.mu.Unlock()
}

// lockForWrite takes the write lock of a table that is not frozen.
func (t *Table[T]) lockForWrite() {
	t.mu.Lock()
	if t.frozen.Load() {
		t.mu.Unlock()
		panic("allowedips: mutation of a frozen table")
	}
}

// rlock takes the read lock unless t is frozen and reports whether it did
// (pass the result to runlock).
func (t *Table[T]) rlock() bool {
	if t.frozen.Load() {
		return false
	}
	t.mu.RLock()
	return true
}

func (t *Table[T]) runlock(locked bool) {
	if locked {
		t.mu.RUnlock()
	}
}

// CheckPrefix returns an error unless p is a valid, canonical prefix: its
// address must have no bits set beyond the prefix length (192.0.2.0/24, not
// 192.0.2.1/24), and the address must carry no IPv6 zone. IPv4-mapped IPv6
// prefixes (::ffff:0:0/96) are IPv6 prefixes and stay distinct from IPv4.
func CheckPrefix(p netip.Prefix) error {
	if !p.IsValid() {
		return fmt.Errorf("allowedips: invalid prefix %v", p)
	}
	if p.Addr().Zone() != "" {
		return fmt.Errorf("allowedips: prefix %v has a zone", p)
	}
	if m := p.Masked(); m != p {
		return fmt.Errorf("allowedips: prefix %v is not canonical (want %v)", p, m)
	}
	return nil
}

func (t *Table[T]) rootFor(is4 bool) **node[T] {
	if is4 {
		return &t.root4
	}
	return &t.root6
}

// Insert maps p to value, replacing any value p already had. p must pass
// CheckPrefix; otherwise Insert returns an error and changes nothing.
func (t *Table[T]) Insert(p netip.Prefix, value T) error {
	if err := CheckPrefix(p); err != nil {
		return err
	}
	k, n := keyFromAddr(p.Addr()), uint8(p.Bits())
	t.lockForWrite()
	defer t.mu.Unlock()
	link := t.rootFor(p.Addr().Is4())
	for {
		cur := *link
		if cur == nil {
			*link = t.newLeaf(k, n, value)
			return nil
		}
		common := min(commonBits(cur.key, k), cur.bits, n)
		switch {
		case common == cur.bits && common == n: // exact match
			if !cur.has {
				t.n++
			}
			cur.has, cur.value = true, value
			return nil
		case common == cur.bits: // cur is a proper prefix of p: descend
			link = &cur.child[k.bit(cur.bits)]
		case common == n: // p is a proper prefix of cur: new node above cur
			leaf := t.newLeaf(k, n, value)
			leaf.child[cur.key.bit(n)] = cur
			*link = leaf
			return nil
		default: // diverge below common: a branch node holds both
			branch := &node[T]{key: k.and(maskOf(common)), mask: maskOf(common), bits: common}
			branch.child[k.bit(common)] = t.newLeaf(k, n, value)
			branch.child[cur.key.bit(common)] = cur
			*link = branch
			return nil
		}
	}
}

func (t *Table[T]) newLeaf(k key, n uint8, value T) *node[T] {
	t.n++
	return &node[T]{key: k, mask: maskOf(n), bits: n, has: true, value: value}
}

// Remove deletes the exact prefix p (not the prefixes it covers) and reports
// whether it was present.
func (t *Table[T]) Remove(p netip.Prefix) bool {
	if CheckPrefix(p) != nil {
		return false
	}
	k, n := keyFromAddr(p.Addr()), uint8(p.Bits())
	t.lockForWrite()
	defer t.mu.Unlock()
	root := t.rootFor(p.Addr().Is4())
	var removed bool
	*root = t.remove(*root, k, n, &removed)
	return removed
}

func (t *Table[T]) remove(cur *node[T], k key, n uint8, removed *bool) *node[T] {
	if cur == nil || cur.bits > n || k.and(cur.mask) != cur.key {
		return cur
	}
	if cur.bits < n {
		b := k.bit(cur.bits)
		cur.child[b] = t.remove(cur.child[b], k, n, removed)
		return t.compact(cur)
	}
	if cur.has {
		*removed = true
		t.n--
		var zero T
		cur.has, cur.value = false, zero
	}
	return t.compact(cur)
}

// compact removes cur if it no longer carries a value and has fewer than two
// children, preserving the invariant that value-less nodes are branches.
func (t *Table[T]) compact(cur *node[T]) *node[T] {
	if cur.has {
		return cur
	}
	switch {
	case cur.child[0] == nil:
		return cur.child[1]
	case cur.child[1] == nil:
		return cur.child[0]
	}
	return cur
}

// RemoveByValue deletes every prefix mapped to value and returns how many
// were removed.
func (t *Table[T]) RemoveByValue(value T) int {
	t.lockForWrite()
	defer t.mu.Unlock()
	before := t.n
	t.root4 = t.removeValue(t.root4, value)
	t.root6 = t.removeValue(t.root6, value)
	return before - t.n
}

func (t *Table[T]) removeValue(cur *node[T], value T) *node[T] {
	if cur == nil {
		return nil
	}
	cur.child[0] = t.removeValue(cur.child[0], value)
	cur.child[1] = t.removeValue(cur.child[1], value)
	if cur.has && cur.value == value {
		var zero T
		cur.has, cur.value = false, zero
		t.n--
	}
	return t.compact(cur)
}

// Len returns the number of prefixes in the table.
func (t *Table[T]) Len() int {
	defer t.runlock(t.rlock())
	return t.n
}

// Lookup returns the value of the longest prefix containing a. IPv4 and
// IPv6 are separate spaces: an IPv4-mapped IPv6 address is looked up as
// IPv6. Lookup does not allocate.
func (t *Table[T]) Lookup(a netip.Addr) (value T, ok bool) {
	if !a.IsValid() {
		return value, false
	}
	defer t.runlock(t.rlock())
	return lookup(*t.rootFor(a.Is4()), keyFromAddr(a))
}

// LookupIP is Lookup for a raw address as found in a packet header: 4 bytes
// for IPv4, 16 for IPv6. Other lengths find nothing. It does not allocate.
func (t *Table[T]) LookupIP(ip []byte) (value T, ok bool) {
	var k key
	var root **node[T]
	switch len(ip) {
	case 4:
		k.hi = uint64(binary.BigEndian.Uint32(ip)) << 32
		root = &t.root4
	case 16:
		k.hi, k.lo = binary.BigEndian.Uint64(ip[:8]), binary.BigEndian.Uint64(ip[8:])
		root = &t.root6
	default:
		return value, false
	}
	defer t.runlock(t.rlock())
	return lookup(*root, k)
}

func lookup[T comparable](cur *node[T], k key) (value T, ok bool) {
	for cur != nil && k.and(cur.mask) == cur.key {
		if cur.has {
			value, ok = cur.value, true
		}
		if cur.bits == 128 {
			break
		}
		cur = cur.child[k.bit(cur.bits)]
	}
	return value, ok
}

// Entries returns the prefixes mapped to value, IPv4 first, each family in
// address order with shorter prefixes before longer ones at the same
// address.
func (t *Table[T]) Entries(value T) []netip.Prefix {
	defer t.runlock(t.rlock())
	var out []netip.Prefix
	out = collect(t.root4, true, func(v T) bool { return v == value }, out)
	out = collect(t.root6, false, func(v T) bool { return v == value }, out)
	return out
}

// All returns every prefix in the table in the order of Entries, with its
// value, for dumping the configuration.
func (t *Table[T]) All() (prefixes []netip.Prefix, values []T) {
	defer t.runlock(t.rlock())
	walk(t.root4, true, func(p netip.Prefix, v T) {
		prefixes, values = append(prefixes, p), append(values, v)
	})
	walk(t.root6, false, func(p netip.Prefix, v T) {
		prefixes, values = append(prefixes, p), append(values, v)
	})
	return prefixes, values
}

func collect[T comparable](cur *node[T], is4 bool, match func(T) bool, out []netip.Prefix) []netip.Prefix {
	walk(cur, is4, func(p netip.Prefix, v T) {
		if match(v) {
			out = append(out, p)
		}
	})
	return out
}

// walk visits the valued nodes below cur in pre-order (child 0 before
// child 1), which is address order.
func walk[T comparable](cur *node[T], is4 bool, visit func(netip.Prefix, T)) {
	if cur == nil {
		return
	}
	if cur.has {
		visit(netip.PrefixFrom(cur.key.addr(is4), int(cur.bits)), cur.value)
	}
	walk(cur.child[0], is4, visit)
	walk(cur.child[1], is4, visit)
}
