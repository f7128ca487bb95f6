package ciphers

import "github.com/gmtun/gmtun/ciphers/internal/zuc"

// KernelLanes is the number of packets one call of the multi-lane ZUC
// kernels takes: the width of the ZUC batch primitives
// (ciphers/internal/zuc.Lanes, which the amd64 dispatch checks at build
// time against the kernels' own kernels/zuc.MaxLanes).
const KernelLanes = zuc.Lanes
