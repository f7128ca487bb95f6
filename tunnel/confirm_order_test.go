package tunnel

import (
	"sync"
	"testing"
	"time"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/handshake"
	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// confirmHookBind calls hook after it has sent a handshake confirm
// (0x13), before Send returns to the handshake worker that sent it.
type confirmHookBind struct {
	*netiotest.ChannelBind
	mu   sync.Mutex
	hook func()
}

func (b *confirmHookBind) Send(bufs [][]byte, ep netio.Endpoint) error {
	err := b.ChannelBind.Send(bufs, ep)
	b.mu.Lock()
	hook := b.hook
	b.mu.Unlock()
	if hook != nil && len(bufs) == 1 && len(bufs[0]) > 0 && bufs[0][0] == handshake.MessageConfirmType {
		hook()
	}
	return err
}

// TestInitiatorInstallsBeforeConfirm: the initiator installs the new
// keypair before its confirm leaves, so the responder's first packets on
// the keypair it promotes on that confirm are never refused as
// unknown_index. The hook holds the initiator's handshake worker right
// after the confirm is sent until the responder has sent a data packet on
// the new keypair; before the fix the initiator installed the keypair only
// after that, and the packet was dropped (the 1 h soak with short key
// lifetimes lost 39 of them over 716 rekeys).
func TestInitiatorInstallsBeforeConfirm(t *testing.T) {
	goroutineLeakCheck(t)
	clock := newFakeClock()
	var ha *confirmHookBind
	var ib *impairedBind
	a, b := newPair(t, pairOptions{suites: []ciphers.SuiteID{ciphers.SM4GCM}, clock: clock,
		wrapA: func(c *netiotest.ChannelBind) netio.Bind { ha = &confirmHookBind{ChannelBind: c}; return ha },
		wrapB: impair(&ib)})
	sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 0, 64)})
	sendExpect(t, b, a, [][]byte{ipPacket(addrB4, addrA4, 0, 64)})
	oldA, oldB := a.peer.sendKP.Load(), b.peer.sendKP.Load()

	reply := ipPacket(addrB4, addrA4, 1, 100)
	hooked := make(chan string, 1)
	ha.mu.Lock()
	ha.hook = func() {
		deadline := time.Now().Add(5 * time.Second)
		for b.peer.sendKP.Load() == oldB { // b promotes on the confirm
			if time.Now().After(deadline) {
				hooked <- "b never promoted the new keypair"
				return
			}
			time.Sleep(time.Millisecond)
		}
		sent := ib.sentOf(MessageDataType)
		b.tun.Outbound <- reply
		for ib.sentOf(MessageDataType) == sent {
			if time.Now().After(deadline) {
				hooked <- "b never sent its packet"
				return
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // a's receive path classifies it
		hooked <- ""
	}
	ha.mu.Unlock()

	// A rekey initiated by a (the initiator of the current keypair).
	step(clock, handshake.RekeyAfterTime+time.Second, a.dev, b.dev)
	a.tun.Outbound <- ipPacket(addrA4, addrB4, 1, 64)
	select {
	case msg := <-hooked:
		if msg != "" {
			t.Fatal(msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no rekey confirm was sent; stats: %s", statsString(a.dev))
	}
	ha.mu.Lock()
	ha.hook = nil
	ha.mu.Unlock()
	waitFor(t, "a's new keypair", func() bool { return a.peer.sendKP.Load() != oldA })
	for {
		got := recvPacket(t, a)
		if string(got) == string(reply) {
			break
		}
	}
	if n := a.dev.Stats().Drops["unknown_index"]; n != 0 {
		t.Fatalf("a dropped %d packets as unknown_index", n)
	}
}
