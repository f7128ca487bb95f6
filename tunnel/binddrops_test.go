package tunnel

import (
	"testing"

	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// countingBind is a ChannelBind that reports fixed drop counters, as the
// Linux bind does (netio.DropReporter).
type countingBind struct {
	*netiotest.ChannelBind
	drops netio.BindDrops
}

func (b *countingBind) Drops() netio.BindDrops { return b.drops }

// TestStatsFoldsBindDrops checks that Stats reports the bind's own drops
// under their reasons, and zeros for a bind without counters.
func TestStatsFoldsBindDrops(t *testing.T) {
	want := netio.BindDrops{Truncated: 1, BadSource: 2, Empty: 3, GROOverflow: 129, Socket: 7}
	a, b := newPair(t, pairOptions{wrapA: func(c *netiotest.ChannelBind) netio.Bind {
		return &countingBind{ChannelBind: c, drops: want}
	}})
	got := a.dev.Stats().Drops
	for reason, n := range map[string]uint64{
		"udp_truncated": want.Truncated, "udp_bad_source": want.BadSource,
		"udp_empty": want.Empty, "udp_gro_overflow": want.GROOverflow, "udp_socket_full": want.Socket,
	} {
		if got[reason] != n {
			t.Errorf("A: drops[%s] = %d, want %d", reason, got[reason], n)
		}
		if v, ok := b.dev.Stats().Drops[reason]; !ok || v != 0 {
			t.Errorf("B (bind without counters): drops[%s] = %d, %v; want 0, present", reason, v, ok)
		}
	}
	if len(got) != len(DropReasons()) {
		t.Errorf("%d drop reasons in Stats, want %d", len(got), len(DropReasons()))
	}
}
