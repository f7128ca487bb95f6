package impl

import "github.com/gmtun/gmtun/kernels/cpu"

// Cap is a GODEBUG mask that caps the implementations a process selects
// (see kernels/cpu.Cap): Tier is the name of the SM4 implementation it
// leaves on a CPU with every feature.
type Cap = cpu.Cap

// Caps returns kernels/cpu's masks, widest tier first, for package ciphers,
// which does not import kernels.
func Caps() []Cap { return cpu.Caps() }

// AllOff is the GODEBUG mask under which every primitive runs Generic.
const AllOff = cpu.AllOff
