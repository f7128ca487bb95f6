//go:build !amd64 || !gc || purego

package cpu

func detect() Features { return Features{} }
