package sm4

import (
	"crypto/cipher"
	"fmt"
	"os"
	"runtime"
	"golang.org/x/sys/unix"
	"testing"
	"time"
)

func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

func TestZZCPUTime(t *testing.T) {
	if os.Getenv("CPUTIME") == "" {
		t.Skip()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	measure := func(f func()) time.Duration {
		best := time.Hour
		for range 9 {
			const n = 50
			s := threadCPU()
			for range n {
				f()
			}
			if d := (threadCPU() - s) / n; d < best {
				best = d
			}
		}
		return best
	}
	for _, size := range []int{64, 576, 1420, 8192} {
		for i, impl := range impls {
			_ = i
			a := impl.gcm()
			buf := make([]byte, size, size+16)
			nonce, ad := make([]byte, 12), make([]byte, 16)
			seal := measure(func() { a.Seal(buf[:0], nonce, buf, ad) })
			sealed := a.Seal(nil, nonce, make([]byte, size), ad)
			ob := make([]byte, len(sealed))
			open := measure(func() { copy(ob, sealed); a.Open(ob[:0], nonce, ob, ad) })
			iv := make([]byte, 16)
			ctr := measure(func() { impl.ctr(iv).XORKeyStream(buf, buf) })
			blk := impl.block()
			ecb := measure(func() {
				for off := 0; off+16 <= size; off += 16 {
					blk.Encrypt(buf[off:], buf[off:])
				}
			})
			fmt.Printf("%-5s %5d: block %8v  ctr %8v  seal %8v  open %8v   (seal %.0f MB/s)\n", impl.name, size, ecb, ctr, seal, open, float64(size)/float64(seal.Nanoseconds())*1000)
		}
	}
	_ = cipher.NewCTR
}
