package netio

// InPlace adapts a copying ReceiveFunc (wireguard-go's binds off Linux,
// the in-memory test binds) to an InPlaceReceiveFunc, so the tunnel has a
// single receive pipeline: each datagram lands in a buffer of its own
// (owner[k] = k), its slice's capacity ends with it, and at most
// min(len(bufs), batch) datagrams are read per call. Nothing is ever held
// back between calls.
func InPlace(recv ReceiveFunc, batch int) InPlaceReceiveFunc {
	batch = max(batch, 1)
	sizes := make([]int, batch)
	return func(bufs, pkts [][]byte, owner []int, eps []Endpoint) (int, error) {
		k := min(len(bufs), len(pkts), len(owner), len(eps), batch)
		n, err := recv(bufs[:k], sizes[:k], eps[:k])
		for i := range n {
			s := sizes[i]
			pkts[i], owner[i] = bufs[i][:s:s], i
		}
		return n, err
	}
}
