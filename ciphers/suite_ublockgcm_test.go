package ciphers

import (
	"slices"
	"testing"
)

// TestUBlockGCMWire checks the suite's identity: code point 0x04, the
// configuration name, the sm4-gcm limits, never a default.
func TestUBlockGCMWire(t *testing.T) {
	if UBlockGCM != 0x04 || UBlockGCM.String() != "ublock-gcm" {
		t.Fatalf("UBlockGCM = %#02x %q", uint8(UBlockGCM), UBlockGCM)
	}
	if id, err := ParseSuite("ublock-gcm"); err != nil || id != UBlockGCM {
		t.Fatalf("ParseSuite(ublock-gcm) = %v, %v", id, err)
	}
	if !slices.Contains(Suites[:], UBlockGCM) || slices.Contains(DefaultSuites[:], UBlockGCM) {
		t.Fatalf("ublock-gcm must be in Suites and not in DefaultSuites: %v / %v", Suites, DefaultSuites)
	}
	if p, q := UBlockGCM.Params(), SM4GCM.Params(); p != q {
		t.Fatalf("Params = %+v, want sm4-gcm's %+v", p, q)
	}
}

func BenchmarkUBlockGCMSeal64x1420(b *testing.B) { benchmarkSuiteSeal(b, ublockgcmSuite, 64, 1420) }
func BenchmarkUBlockGCMOpen64x1420(b *testing.B) { benchmarkSuiteOpen(b, ublockgcmSuite, 64, 1420) }
