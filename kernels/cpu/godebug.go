package cpu

// godebugOff reports which of the names in known the GODEBUG value env
// switches off, using the golang.org/x/sys/cpu syntax: comma-separated
// "cpu.<name>=off" or "cpu.<name>=on" fields, where "cpu.all" addresses
// every name. Later fields override earlier ones; fields with other
// prefixes, unknown names or other values are ignored (x/sys/cpu already
// prints a diagnostic for those, so this parser stays silent).
func godebugOff(env string, known []string) map[string]bool {
	off := make(map[string]bool, len(known))
	for env != "" {
		var field string
		field, env = cutByte(env, ',')
		if len(field) < 4 || field[:4] != "cpu." {
			continue
		}
		key, value := cutByte(field[4:], '=')
		var disable bool
		switch value {
		case "off":
			disable = true
		case "on":
			disable = false
		default:
			continue
		}
		for _, name := range known {
			if key == "all" || key == name {
				off[name] = disable
			}
		}
	}
	return off
}

// cutByte splits s around the first c; after is empty when c is absent.
func cutByte(s string, c byte) (before, after string) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}
