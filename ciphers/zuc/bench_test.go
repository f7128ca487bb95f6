package zuc

import (
	"fmt"
	"testing"

	gmsm "github.com/emmansun/gmsm/zuc"
	"github.com/gmtun/gmtun/internal/cputime"
)

// Each benchmark runs gmtun's function and gmsm's equivalent on the same
// input (sub-benchmarks gmtun/<size> and gmsm/<size>), one-shot per
// message as the suites use them: key/IV setup included. Run it with and
// without -tags purego (gmsm honours the tag too).

var benchSizes = []int{64, 576, 1420, 8192}

func benchPair(b *testing.B, gmtun func(buf []byte), other func(buf []byte)) {
	for _, impl := range []struct {
		name string
		f    func([]byte)
	}{{"gmtun", gmtun}, {"gmsm", other}} {
		for _, n := range benchSizes {
			buf := make([]byte, n)
			b.Run(fmt.Sprintf("%s/%d", impl.name, n), func(b *testing.B) {
				cputime.Loop(b, n, func() { impl.f(buf) })
			})
		}
	}
}

func BenchmarkEEA3(b *testing.B) {
	key := make([]byte, 16)
	benchPair(b, func(buf []byte) {
		if err := EEA3(key, 1, 2, 1, buf, buf, 8*len(buf)); err != nil {
			b.Fatal(err)
		}
	}, func(buf []byte) {
		s, err := gmsm.NewEEACipher(key, 1, 2, 1)
		if err != nil {
			b.Fatal(err)
		}
		s.XORKeyStream(buf, buf)
	})
}

func BenchmarkEIA3(b *testing.B) {
	key := make([]byte, 16)
	benchPair(b, func(buf []byte) {
		if _, err := EIA3(key, 1, 2, 1, buf, 8*len(buf)); err != nil {
			b.Fatal(err)
		}
	}, func(buf []byte) {
		h, err := gmsm.NewEIAHash(key, 1, 2, 1)
		if err != nil {
			b.Fatal(err)
		}
		h.Write(buf)
		h.Sum(nil)
	})
}

func BenchmarkZUC256(b *testing.B) {
	key, iv := make([]byte, 32), make([]byte, 23)
	benchPair(b, func(buf []byte) {
		s, err := NewZUC256(key, iv)
		if err != nil {
			b.Fatal(err)
		}
		s.XORKeyStream(buf, buf)
	}, func(buf []byte) {
		s, err := gmsm.NewCipher(key, iv)
		if err != nil {
			b.Fatal(err)
		}
		s.XORKeyStream(buf, buf)
	})
}

func BenchmarkMAC256(b *testing.B) {
	key, iv := make([]byte, 32), make([]byte, 23)
	benchPair(b, func(buf []byte) {
		if _, err := MAC256(key, iv, buf, 8*len(buf), 16); err != nil {
			b.Fatal(err)
		}
	}, func(buf []byte) {
		h, err := gmsm.NewHash256(key, iv, 16)
		if err != nil {
			b.Fatal(err)
		}
		h.Write(buf)
		h.Sum(nil)
	})
}
