package tunnel

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gmtun/gmtun/ciphers"
	"github.com/gmtun/gmtun/tunnel/netio"
	"github.com/gmtun/gmtun/tunnel/netio/netiotest"
)

// senderBind records, for every data datagram vector sent, whether the
// peer's sequential sender (the pipeline) or another goroutine (run to
// completion) made the call.
type senderBind struct {
	*netiotest.ChannelBind
	mu                 sync.Mutex
	pipelined, inlined int
}

func (b *senderBind) Send(bufs [][]byte, ep netio.Endpoint) error {
	if len(bufs) > 0 && len(bufs[0]) > 0 && bufs[0][0] == MessageDataType {
		pc := make([]uintptr, 32)
		frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
		pipelined := false
		for {
			f, more := frames.Next()
			if strings.HasSuffix(f.Function, ".RoutineSequentialSender") {
				pipelined = true
			}
			if !more {
				break
			}
		}
		b.mu.Lock()
		if pipelined {
			b.pipelined++
		} else {
			b.inlined++
		}
		b.mu.Unlock()
	}
	return b.ChannelBind.Send(bufs, ep)
}

// goroutineStacks returns the stacks of every goroutine.
func goroutineStacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

func (b *senderBind) counts() (pipelined, inlined int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pipelined, b.inlined
}

// TestRunToCompletion runs every suite with Config.RunToCompletion on
// both sides: the first packets wait for the handshake and are flushed by
// it, the rest are sealed and sent by the TUN reader and opened and
// delivered by the UDP receiver; everything arrives, in order, no data
// datagram goes through a sequential sender, and no worker or sequential
// routine runs. The same exchange without it goes only through them.
func TestRunToCompletion(t *testing.T) {
	for _, inline := range []bool{true, false} {
		for _, suite := range ciphers.Suites {
			name := suite.String() + "/pipeline"
			if inline {
				name = suite.String() + "/inline"
			}
			t.Run(name, func(t *testing.T) {
				goroutineLeakCheck(t)
				var ba, bb *senderBind
				wrap := func(target **senderBind) func(*netiotest.ChannelBind) netio.Bind {
					return func(c *netiotest.ChannelBind) netio.Bind {
						*target = &senderBind{ChannelBind: c}
						return *target
					}
				}
				a, b := newPair(t, pairOptions{
					suites: []ciphers.SuiteID{suite}, inline: inline,
					wrapA: wrap(&ba), wrapB: wrap(&bb),
				})
				sendExpect(t, a, b, [][]byte{ipPacket(addrA4, addrB4, 99999, 64)})
				sendExpect(t, a, b, mixedPackets(addrA4, addrB4, addrA6, addrB6, 500, 0))
				sendExpect(t, b, a, mixedPackets(addrB4, addrA4, addrB6, addrA6, 500, 1000))
				stacks := goroutineStacks()
				for _, r := range []string{"RoutineEncryption", "RoutineDecryption", "RoutineSequentialSender", "RoutineSequentialReceiver"} {
					if running := strings.Contains(stacks, "tunnel."+r) || strings.Contains(stacks, ")."+r+"("); running == inline {
						t.Errorf("RunToCompletion %v: %s running = %v", inline, r, running)
					}
				}
				for _, sb := range []*senderBind{ba, bb} {
					pipelined, inlined := sb.counts()
					if inline && (pipelined != 0 || inlined == 0) {
						t.Errorf("RunToCompletion: %d data sends from the sequential sender, %d inline; want 0 and > 0", pipelined, inlined)
					}
					if !inline && (inlined != 0 || pipelined == 0) {
						t.Errorf("pipeline: %d data sends inline, %d from the sequential sender; want 0 and > 0", inlined, pipelined)
					}
				}
				for _, s := range []*side{a, b} {
					st := s.dev.Stats()
					if st.Seal.Packets < 500 {
						t.Errorf("sealed %d packets, want ≥ 500", st.Seal.Packets)
					}
					if d := unexpectedDrops(st); len(d) != 0 {
						t.Errorf("drops %v, want none", d)
					}
				}
			})
		}
	}
}
