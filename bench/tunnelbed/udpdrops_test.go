//go:build linux

package main

import "testing"

func TestParseProcNetUDP(t *testing.T) {
	in := []byte(`   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  113: 00000000:CAAC 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 41027 2 0000000000000000 0
  200: 020013C6:1451 010013C6:D016 01 00000000:0002E600 00:00000000 00000000     0        0 41311 2 0000000000000000 459750
  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  113: 00000000000000000000000000000000:CAAC 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 41028 2 0000000000000000 7
`)
	m := udpSocketDrops{}
	if err := parseProcNetUDP(in, m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m[41027].port != 51884 || m[41027].drops != 0 || m[41311].port != iperfPort || m[41311].drops != 459750 || m[41028].drops != 7 {
		t.Fatalf("parsed %+v", m)
	}
	if err := parseProcNetUDP([]byte("  1: 0100007F 00000000:0000 07 0:0 0:0 0 0 0 5 2 0 0\n"), udpSocketDrops{}); err == nil {
		t.Fatal("a row without a port was accepted")
	}
}
