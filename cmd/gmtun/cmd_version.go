package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release version, set at link time with
//
//	go build -ldflags "-X main.version=v1.0.0" ./cmd/gmtun
//
// When empty, the module version recorded by the Go toolchain is used.
var version string

// versionReporters add lines to `gmtun version` (for example the SIMD
// kernel tier in use). Other files append to it from init functions.
var versionReporters []func(w io.Writer)

func init() {
	register(&command{
		name:    "version",
		summary: "print version and build information",
		order:   90,
		help: `Prints the gmtun version, the VCS revision it was built from (when known),
and the Go toolchain and platform.
`,
		setup: func(e *env, fs *flag.FlagSet) func([]string) int {
			return func(args []string) int {
				if len(args) != 0 {
					return usageErrorf(e, "version: takes no arguments, got %q", args[0])
				}
				bi, _ := debug.ReadBuildInfo()
				writeVersion(e.stdout, bi)
				return exitOK
			}
		},
	})
}

// writeVersion prints the version lines; bi may be nil.
func writeVersion(w io.Writer, bi *debug.BuildInfo) {
	v := version
	if v == "" && bi != nil {
		v = bi.Main.Version
	}
	if v == "" {
		v = "(unknown)"
	}
	fmt.Fprintf(w, "gmtun %s\n", v)
	if bi != nil {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			if modified == "true" {
				rev += " (modified)"
			}
			fmt.Fprintf(w, "revision: %s\n", rev)
		}
	}
	fmt.Fprintf(w, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, r := range versionReporters {
		r(w)
	}
}
