//go:build !unix

package config

import "fmt"

// readSecretFile refuses to read key files on systems without Unix
// permissions: their privacy could not be checked.
func readSecretFile(path string) ([]byte, error) {
	return nil, fmt.Errorf("key file %s: permission checks need a Unix system", path)
}
