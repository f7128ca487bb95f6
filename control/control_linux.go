package control

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// maxSocketPath is the size of sun_path in struct sockaddr_un (unix(7)),
// including the terminating NUL.
const maxSocketPath = 108

// withPrivateUmask runs f with the process umask set to 077, so that the
// socket file is never accessible to others, not even before a chmod. The
// umask is process-wide: call this during start-up, not while other
// goroutines create files.
func withPrivateUmask(f func() error) error {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	return f()
}

// fileOwner returns the owner of fi.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// checkPeer accepts connections from root and from the daemon's own user
// only (SO_PEERCRED, unix(7)).
func checkPeer(conn *net.UnixConn) error {
	rc, err := conn.SyscallConn()
	if err != nil {
		return fmt.Errorf("control: peer credentials: %w", err)
	}
	var cred *syscall.Ucred
	var credErr error
	if err := rc.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return fmt.Errorf("control: peer credentials: %w", err)
	}
	if credErr != nil {
		return fmt.Errorf("control: peer credentials: %w", credErr)
	}
	if cred.Uid != 0 && int(cred.Uid) != os.Geteuid() {
		return fmt.Errorf("control: refused a connection from uid %d (pid %d)", cred.Uid, cred.Pid)
	}
	return nil
}
