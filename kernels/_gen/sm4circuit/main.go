// Command sm4circuit generates the constant-time SM4 S-box of gmtun's
// portable code (ciphers/internal/sm4/sbox_circuit.go): τ of GB/T
// 32907-2016 §6.2 as a straight-line Boolean circuit on 64-lane bit
// planes, with no table and no branch.
//
// Derivation (sbox.go, circuit.go): τ is written as an affine map around
// an inversion in GF(2^8); every tower-field representation GF(((2^2)^2)^2)
// and every isomorphism into it is tried, the inversion is built from
// 36 AND gates of the tower, the linear layers before and after it are
// compiled with Paar's greedy common-subexpression search, and the
// shortest program wins. The program is checked on all 256 inputs against
// the standard's table before anything is written.
//
// Run: go run ./sm4circuit -gosbox ../../ciphers/internal/sm4/sbox_circuit.go -gopkg sm4
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	goSBox := flag.String("gosbox", "", "write the S-box circuit as portable Go to this file")
	goPkg := flag.String("gopkg", "sm4", "package clause of the -gosbox file")
	flag.Parse()
	if *goSBox == "" {
		fmt.Fprintln(os.Stderr, "sm4circuit: -gosbox FILE is required")
		os.Exit(2)
	}
	sf, p := sboxProgram()
	if err := writeGoSBox(*goSBox, *goPkg, sf, p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
