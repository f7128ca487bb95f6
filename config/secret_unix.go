//go:build unix

package config

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// readSecretFile reads a private or preshared key file. It refuses, with a
// message that says how to fix it:
//   - anything but a regular file (opened non-blocking, so a FIFO cannot
//     hang the daemon, and checked with fstat on the open descriptor, so
//     the checks and the read see the same file);
//   - a file with any group or other permission bit (mode & 0o077 ≠ 0),
//     like ssh does for identity files;
//   - a file not owned by the effective uid;
//   - a file larger than maxSecretFileSize.
func readSecretFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open key file %s: %v", path, pathErrText(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot stat key file %s: %v", path, pathErrText(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("key file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("key file %s has mode %04o; it must be 0600 or stricter (chmod 600 %s)", path, perm, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if euid := os.Geteuid(); int(st.Uid) != euid {
			return nil, fmt.Errorf("key file %s is owned by uid %d, not by this process's uid %d", path, st.Uid, euid)
		}
	}
	if fi.Size() > maxSecretFileSize {
		return nil, fmt.Errorf("key file %s is larger than %d bytes", path, maxSecretFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read key file %s: %v", path, pathErrText(err))
	}
	if len(data) > maxSecretFileSize {
		return nil, fmt.Errorf("key file %s is larger than %d bytes", path, maxSecretFileSize)
	}
	return data, nil
}

// configFileProblems describes what makes the configuration file at path
// (fi from fstat of the open file) unsafe to run a tunnel from: whoever
// can write it controls the tunnel. Each problem is a phrase to follow the
// path. Write permission for group or others and an owner other than root
// or the effective user are problems; read permission is not (the file
// holds no secret, the key files do).
func configFileProblems(path string, fi os.FileInfo) []string {
	var out []string
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		out = append(out, fmt.Sprintf(
			"is writable by group or others (mode %04o); whoever can write it controls the tunnel (chmod go-w %s)", perm, path))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if euid := os.Geteuid(); st.Uid != 0 && int(st.Uid) != euid {
			out = append(out, fmt.Sprintf(
				"is owned by uid %d, neither root nor this process's uid %d; whoever owns it controls the tunnel", st.Uid, euid))
		}
	}
	return out
}
