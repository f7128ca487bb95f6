// Package testenv decides what a test does when a prerequisite is missing:
// under CI (CI=true) the test fails, so a green CI run means every test really
// ran; elsewhere it is skipped with the reason printed.
//
// Tests that need root, /dev/net/tun, network namespaces or an external tool
// call one of the Require functions before they touch the system:
//
//	testenv.RequireRoot(t)
//	testenv.RequireTUN(t)
//	testenv.RequireTools(t, "ip", "ping", "iperf3")
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the test runs under CI (the environment variable CI is
// "true"), where a missing prerequisite is a failure, not a skip.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing stops the test because a prerequisite is missing: t.Fatalf under
// CI, t.Skipf otherwise. The reason is printed either way.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("prerequisite missing under CI=true (a skipped test would make CI green without running it): %s", reason)
	}
	t.Skipf("skipped: %s (under CI=true this fails)", reason)
}

// RequireRoot stops the test unless it runs as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "needs root (run `sudo make test`)")
	}
}

// RequireTUN stops the test unless /dev/net/tun exists.
func RequireTUN(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		Missing(t, "needs /dev/net/tun: %v", err)
	}
}

// RequireTools stops the test unless every named program is in PATH.
func RequireTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			Missing(t, "needs %s in PATH (Debian: apt-get install %s)", tool, debianPackage(tool))
		}
	}
}

// RequireNetns stops the test unless it can create network namespaces, veth
// pairs and TUN devices and run the given tools ("ip" is always required).
func RequireNetns(t testing.TB, tools ...string) {
	t.Helper()
	RequireRoot(t)
	RequireTUN(t)
	RequireTools(t, append([]string{"ip"}, tools...)...)
}

// debianPackage names the Debian package that provides a tool.
func debianPackage(tool string) string {
	switch tool {
	case "ip", "tc":
		return "iproute2"
	case "ping":
		return "iputils-ping"
	case "nft":
		return "nftables"
	case "systemd-analyze", "systemd-run", "systemctl":
		return "systemd"
	}
	return tool
}
