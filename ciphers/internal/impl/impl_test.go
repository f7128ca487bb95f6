package impl

import (
	"slices"
	"testing"
)

// withRegistry runs f on an empty registry and restores the real one.
func withRegistry(t *testing.T, f func()) {
	t.Helper()
	saved := registry
	registry = nil
	defer func() { registry = saved }()
	f()
}

func TestSelectReset(t *testing.T) {
	withRegistry(t, func() {
		fast, mid, slow := false, true, true // CPU lacks "fast"
		Register("x", "fast", &fast)
		Register("x", "mid", &mid)
		Register("x", "slow", &slow)
		other := true
		Register("y", "only", &other)

		if got := List("x"); !slices.Equal(got, []string{"fast", "mid", "slow"}) {
			t.Fatalf("List = %v", got)
		}
		if got := Packages(); !slices.Equal(got, []string{"x", "y"}) {
			t.Fatalf("Packages = %v", got)
		}
		if got := Selected("x"); got != "mid" {
			t.Fatalf("Selected at start = %q, want mid", got)
		}
		if Select("x", "fast") {
			t.Fatal("Select of an unsupported implementation succeeded")
		}
		if fast || !mid || !slow {
			t.Fatal("failed Select changed flags")
		}
		if Select("x", "nope") {
			t.Fatal("Select of an unknown implementation succeeded")
		}
		if !Select("x", "slow") || fast || mid || !slow {
			t.Fatalf("Select slow: fast=%v mid=%v slow=%v", fast, mid, slow)
		}
		if got := Selected("x"); got != "slow" {
			t.Fatalf("Selected = %q, want slow", got)
		}
		if !other {
			t.Fatal("Select on x touched y")
		}
		if !Select("x", Generic) || fast || mid || slow {
			t.Fatal("Select generic left a flag on")
		}
		if got := Selected("x"); got != Generic {
			t.Fatalf("Selected = %q, want generic", got)
		}
		Reset("x")
		if fast || !mid || !slow {
			t.Fatalf("Reset: fast=%v mid=%v slow=%v", fast, mid, slow)
		}
		if !Available("x", "mid") || Available("x", "fast") || !Available("x", Generic) || Available("z", "mid") {
			t.Fatal("Available wrong")
		}
	})
}

func TestRegisterPanics(t *testing.T) {
	withRegistry(t, func() {
		a := true
		Register("x", "a", &a)
		for _, tc := range []struct {
			pkg, name string
			flag      *bool
		}{
			{"x", "a", new(bool)},     // duplicate name
			{"x", "b", &a},            // same flag twice
			{"x", Generic, new(bool)}, // reserved name
			{"", "c", new(bool)},
			{"x", "", new(bool)},
			{"x", "d", nil},
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("Register(%q, %q) did not panic", tc.pkg, tc.name)
					}
				}()
				Register(tc.pkg, tc.name, tc.flag)
			}()
		}
	})
}
