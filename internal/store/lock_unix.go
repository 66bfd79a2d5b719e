//go:build unix

package store

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockDir locks dir for this process, with an advisory lock on its LOCK
// file (the kernel lets it go when the process ends, however it ends),
// and writes the holder there: a second process that tries gets
// ErrLocked, naming the holder.
func lockDir(dir string) (*os.File, error) {
	name := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		holder, _ := os.ReadFile(name)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errorf(ErrLocked, "state directory %s is in use by %s", dir, cmp.Or(strings.TrimSpace(string(holder)), "another process"))
		}
		return nil, fmt.Errorf("state directory %s: lock: %w", dir, err)
	}
	host, _ := os.Hostname()
	f.Truncate(0)
	f.WriteAt([]byte(fmt.Sprintf("process %d on %s, since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))), 0)
	return f, nil
}

// unlockDir lets go of lockDir's lock.
func unlockDir(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}
