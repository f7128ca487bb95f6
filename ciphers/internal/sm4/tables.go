package sm4

// The constants of GB/T 32907-2016 that the cipher code uses. The S-box
// is not a table here: it is the Boolean circuit of sbox_circuit.go. The
// standard's S-box table (internal/reftables) and the merged T-tables of
// tables_test.go are the oracles the circuit paths are checked against;
// TestConstantsMatchStandard pins fk and ck to internal/reftables.

// fk is the system parameter FK of GB/T 32907-2016 §7.3.1.
var fk = [4]uint32{0xa3b1bac6, 0x56aa3350, 0x677d9197, 0xb27022dc}

// ck are the fixed parameters CK_i of GB/T 32907-2016 §7.3.2: byte j of
// CK_i is (4i+j)·7 mod 256.
var ck = [32]uint32{
	0x00070e15, 0x1c232a31, 0x383f464d, 0x545b6269,
	0x70777e85, 0x8c939aa1, 0xa8afb6bd, 0xc4cbd2d9,
	0xe0e7eef5, 0xfc030a11, 0x181f262d, 0x343b4249,
	0x50575e65, 0x6c737a81, 0x888f969d, 0xa4abb2b9,
	0xc0c7ced5, 0xdce3eaf1, 0xf8ff060d, 0x141b2229,
	0x30373e45, 0x4c535a61, 0x686f767d, 0x848b9299,
	0xa0a7aeb5, 0xbcc3cad1, 0xd8dfe6ed, 0xf4fb0209,
	0x10171e25, 0x2c333a41, 0x484f565d, 0x646b7279,
}
