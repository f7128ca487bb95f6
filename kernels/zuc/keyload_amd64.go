//go:build amd64 && gc && !purego

package zuc

// Loading keys and IVs into the lanes of a state (ZUC-128: 3GPP TS 35.222
// §3.4; ZUC-256: the 2018 initialization).

// loadZUC128 sets s_i = k_i ‖ d_i ‖ iv_i (8 + 15 + 8 bits) as in
// GB/T 33133.1 §3.5.1, R1 = R2 = 0.
func loadZUC128(w []uint32, lanes, lane int, key, iv *[16]byte) {
	checkLane(lane, lanes)
	for i := 0; i < 16; i++ {
		w[i*lanes+lane] = uint32(key[i])<<23 | zuc128D[i]<<8 | uint32(iv[i])
	}
	w[rowR1*lanes+lane] = 0
	w[rowR2*lanes+lane] = 0
}

func cell4(a, b, c, d byte) uint32 {
	return uint32(a)<<23 | uint32(b)<<16 | uint32(c)<<8 | uint32(d)
}

// zuc256Cells returns the LFSR cells s_0..s_15 of the 2018 ZUC-256
// key/IV/constant layout: key K_0..K_31, IV_0..IV_16 bytes and
// IV_17..IV_24 6-bit symbols (packed MSB first into iv[17..22]), cell
// s_i = 8-bit ‖ 7-bit ‖ 8-bit ‖ 8-bit fields. The key and constant fields
// and the IV fields of a cell are disjoint (the 7-bit fields hold d_i with
// bit 6 set, ORed with a 6-bit IV symbol), so the cells are the OR of
// zuc256KeyPart and zuc256IVPart.
func zuc256Cells(key *[32]byte, iv *[23]byte, c ZUC256Constants) [16]uint32 {
	s := zuc256KeyPart(key, c)
	v := zuc256IVPart(iv)
	for i := range s {
		s[i] |= v[i]
	}
	return s
}

// zuc256KeyPart returns the key and constant fields of the ZUC-256 cells.
func zuc256KeyPart(key *[32]byte, c ZUC256Constants) [16]uint32 {
	if uint(c) >= uint(len(zuc256D)) {
		panic("zuc: invalid ZUC-256 constant set")
	}
	d := &zuc256D[c]
	k := key
	return [16]uint32{
		cell4(k[0], d[0], k[21], k[16]),
		cell4(k[1], d[1], k[22], k[17]),
		cell4(k[2], d[2], k[23], k[18]),
		cell4(k[3], d[3], k[24], k[19]),
		cell4(k[4], d[4], k[25], k[20]),
		cell4(0, d[5], k[5], k[26]),
		cell4(0, d[6], k[6], k[27]),
		cell4(0, d[7], k[7], 0),
		cell4(k[8], d[8], 0, 0),
		cell4(k[9], d[9], 0, 0),
		cell4(0, d[10], k[10], k[28]),
		cell4(k[11], d[11], 0, 0),
		cell4(k[12], d[12], 0, 0),
		cell4(k[13], d[13], 0, 0),
		cell4(k[14], d[14]|k[31]>>4, 0, 0),
		cell4(k[15], d[15]|k[31]&0x0f, k[30], k[29]),
	}
}

// zuc256IVPart returns the IV fields of the ZUC-256 cells (zero in cells
// 0–4 and 15).
func zuc256IVPart(iv *[23]byte) [16]uint32 {
	var zero, v [16]uint32
	storeZUC256(v[:], 1, 0, iv, &zero)
	return v
}

// storeZUC256 stores the cells of one lane, k[i] | the IV fields of iv,
// at w[i*lanes+lane] (k holds the key and constant fields, zuc256KeyPart).
// IV_17..IV_24 are the eight 6-bit symbols of iv[17..22], MSB first.
func storeZUC256(w []uint32, lanes, lane int, iv *[23]byte, k *[16]uint32) {
	t := uint64(iv[17])<<40 | uint64(iv[18])<<32 | uint64(iv[19])<<24 |
		uint64(iv[20])<<16 | uint64(iv[21])<<8 | uint64(iv[22])
	sym := func(i uint) uint32 { return uint32(t>>(42-6*(i-17))) & 0x3f << 16 }
	b := func(i int) uint32 { return uint32(iv[i]) }
	_ = w[15*lanes+lane]
	w[0*lanes+lane] = k[0]
	w[1*lanes+lane] = k[1]
	w[2*lanes+lane] = k[2]
	w[3*lanes+lane] = k[3]
	w[4*lanes+lane] = k[4]
	w[15*lanes+lane] = k[15]
	w[5*lanes+lane] = k[5] | b(0)<<23 | sym(17)
	w[6*lanes+lane] = k[6] | b(1)<<23 | sym(18)
	w[7*lanes+lane] = k[7] | b(10)<<23 | sym(19) | b(2)
	w[8*lanes+lane] = k[8] | sym(20) | b(3)<<8 | b(11)
	w[9*lanes+lane] = k[9] | sym(21) | b(12)<<8 | b(4)
	w[10*lanes+lane] = k[10] | b(5)<<23 | sym(22)
	w[11*lanes+lane] = k[11] | sym(23) | b(6)<<8 | b(13)
	w[12*lanes+lane] = k[12] | sym(24) | b(7)<<8 | b(14)
	w[13*lanes+lane] = k[13] | b(15)<<8 | b(8)
	w[14*lanes+lane] = k[14] | b(16)<<8 | b(9)
}

// loadZUC256 loads the ZUC-256 cells of key, iv and constant set c into
// lane (R1 = R2 = 0).
func loadZUC256(w []uint32, lanes, lane int, key *[32]byte, iv *[23]byte, c ZUC256Constants) {
	checkLane(lane, lanes)
	s := zuc256Cells(key, iv, c)
	for i := range s {
		w[i*lanes+lane] = s[i]
	}
	w[rowR1*lanes+lane] = 0
	w[rowR2*lanes+lane] = 0
}
