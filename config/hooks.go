package config

import (
	"path/filepath"
	"strings"
)

// The hook keys, appended to the [interface] schema here so that the
// shared schema list in load.go stays as it is.
func init() {
	interfaceKeys = append(interfaceKeys, hookKeys...)
}

// hookKeys are the [interface] keys of Hooks, in the order they run.
var hookKeys = []string{"pre_up", "post_up", "pre_down", "post_down"}

// MaxHookCommands bounds the commands of one hook key.
const MaxHookCommands = 32

// Hooks are commands `gmtun up` runs around starting and stopping the
// interface, as wg-quick's PreUp/PostUp/PreDown/PostDown. Each command is
// an argv list run without a shell (the first element an absolute path);
// "%i" in an argument is replaced by the interface name when it runs.
type Hooks struct {
	// PreUp runs before the TUN interface is created; a failure aborts
	// the start.
	PreUp [][]string
	// PostUp runs once the interface is up and routed, before READY=1; a
	// failure aborts the start (and undoes it).
	PostUp [][]string
	// PreDown runs on a clean stop before the routes and addresses are
	// removed; failures are logged.
	PreDown [][]string
	// PostDown runs on a clean stop once the interface is gone; failures
	// are logged.
	PostDown [][]string
}

// parseHooks reads the hook keys of the [interface] section s.
func parseHooks(s *section, ifc *Interface) error {
	for _, key := range hookKeys {
		cmds, err := parseCommands(s, key)
		if err != nil {
			return err
		}
		switch key {
		case "pre_up":
			ifc.Hooks.PreUp = cmds
		case "post_up":
			ifc.Hooks.PostUp = cmds
		case "pre_down":
			ifc.Hooks.PreDown = cmds
		case "post_down":
			ifc.Hooks.PostDown = cmds
		}
	}
	return nil
}

// parseCommands reads key: an array of commands, each a non-empty array of
// strings whose first element is an absolute path.
func parseCommands(s *section, key string) ([][]string, error) {
	raw, ok := s.m[key]
	if !ok {
		return nil, nil
	}
	const form = `an array of commands, each an array of strings (e.g. [["/usr/sbin/nft", "-f", "/etc/gmtun/%%i.nft"]]; for a shell: [["/bin/sh", "-c", "…"]])`
	arr, isArr := raw.([]any)
	if !isArr {
		return nil, s.errorf(key, "must be "+form+", not %s", typeName(raw))
	}
	if len(arr) > MaxHookCommands {
		return nil, s.errorf(key, "has %d commands; at most %d", len(arr), MaxHookCommands)
	}
	out := make([][]string, 0, len(arr))
	for i, c := range arr {
		argv, isArr := c.([]any)
		if !isArr {
			return nil, s.errorf(key, "command %d is %s; each command must be an array of strings, "+
				"the program and its arguments (no shell: write [\"/bin/sh\", \"-c\", \"…\"] for one)", i+1, typeName(c))
		}
		if len(argv) == 0 {
			return nil, s.errorf(key, "command %d is empty", i+1)
		}
		cmd := make([]string, len(argv))
		for j, a := range argv {
			str, isStr := a.(string)
			if !isStr {
				return nil, s.errorf(key, "command %d: argument %d is %s, not a string", i+1, j+1, typeName(a))
			}
			if strings.ContainsRune(str, 0) {
				return nil, s.errorf(key, "command %d: argument %d contains a NUL byte", i+1, j+1)
			}
			cmd[j] = str
		}
		if !filepath.IsAbs(cmd[0]) {
			return nil, s.errorf(key, "command %d: the program %q must be an absolute path (hooks do not search $PATH)", i+1, cmd[0])
		}
		out = append(out, cmd)
	}
	return out, nil
}
