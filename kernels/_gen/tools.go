//go:build tools

// Package gen holds the avo programs that generate gmtun's assembly
// kernels. It is its own module so avo never enters gmtun's dependencies.
package gen

import _ "github.com/mmcloughlin/avo/build"
