package gcmctr

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// block is the counter block nonce ‖ BE32(count), assembled byte-wise.
func block(nonce *[NonceSize]byte, count uint32) [BlockSize]byte {
	var b [BlockSize]byte
	copy(b[:], nonce[:])
	binary.BigEndian.PutUint32(b[NonceSize:], count)
	return b
}

func TestPutAndFill(t *testing.T) {
	var nonce [NonceSize]byte
	for i := range nonce {
		nonce[i] = byte(0xa0 + i)
	}
	for _, count := range []uint32{0, 1, 2, 0x01020304, 1<<32 - 3, 1<<32 - 1} {
		k := New(&nonce, count)
		var got [BlockSize]byte
		k.Put(&got)
		if want := block(&nonce, count); got != want {
			t.Fatalf("Put(New(nonce, %#x)) = %x, want %x", count, got, want)
		}

		// Fill writes whole blocks only, inc32 wrapping mod 2^32, and
		// advances k past them.
		const blocks = 5
		buf := bytes.Repeat([]byte{0xee}, blocks*BlockSize+7)
		k.Fill(buf)
		for i := range blocks {
			if want := block(&nonce, count+uint32(i)); !bytes.Equal(buf[i*BlockSize:(i+1)*BlockSize], want[:]) {
				t.Fatalf("count %#x: Fill block %d = %x, want %x", count, i, buf[i*BlockSize:(i+1)*BlockSize], want)
			}
		}
		if !bytes.Equal(buf[blocks*BlockSize:], bytes.Repeat([]byte{0xee}, 7)) {
			t.Fatalf("count %#x: Fill wrote the partial block: %x", count, buf[blocks*BlockSize:])
		}
		if k.Count != count+blocks {
			t.Fatalf("count %#x: after Fill Count = %#x, want %#x", count, k.Count, count+blocks)
		}
	}
}
