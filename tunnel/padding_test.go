package tunnel

import "testing"

func TestPaddedLen(t *testing.T) {
	for _, c := range []struct{ n, mtu, want int }{
		{0, 1420, 0},       // keepalive: no body
		{1, 1420, 16},      // rounded up to 16
		{16, 1420, 16},     // already a multiple
		{1400, 1420, 1408}, // rounded up, still within the MTU
		{1409, 1420, 1420}, // 1424 would exceed the MTU: pad to the MTU only
		{1420, 1420, 1420}, // a full-size packet is never padded past the MTU
		{1500, 1420, 1500}, // larger than the MTU (not sent by the device): unpadded
		{1279, 1280, 1280},
	} {
		if got := paddedLen(c.n, c.mtu); got != c.want {
			t.Errorf("paddedLen(%d, %d) = %d, want %d", c.n, c.mtu, got, c.want)
		}
	}
}
