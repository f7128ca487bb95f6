//go:build !linux

// Command tunnelbed is gmtun's tunnel test bed. It needs Linux (network
// namespaces, veth, TUN); see bench/README.md.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "tunnelbed: needs Linux (network namespaces, veth, TUN)")
	os.Exit(3)
}
