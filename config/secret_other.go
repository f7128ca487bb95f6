//go:build !unix

package config

import (
	"fmt"
	"os"
)

// readSecretFile refuses to read key files on systems without Unix
// permissions: their privacy could not be checked.
func readSecretFile(path string) ([]byte, error) {
	return nil, fmt.Errorf("key file %s: permission checks need a Unix system", path)
}

// configFileProblems reports write permission for group or others on the
// configuration file (ownership cannot be checked here).
func configFileProblems(path string, fi os.FileInfo) []string {
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return []string{fmt.Sprintf(
			"is writable by group or others (mode %04o); whoever can write it controls the tunnel (chmod go-w %s)", perm, path)}
	}
	return nil
}
