package main

import "testing"

func TestDeriveSBox(t *testing.T) {
	s := deriveSBox()
	s.checkGFNI()
	s.checkAESNI()
	t.Logf("pre matrix %#016x c %#02x; post matrix %#016x c %#02x", s.pre.matrix(), s.pre.c, s.post.matrix(), s.post.c)
}
