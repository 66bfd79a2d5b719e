//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockFileName is the file in a data dir that a running cluster holds an
// exclusive flock on. The kernel drops the lock when the process dies, even
// by kill -9, so a crash never leaves the directory locked.
const lockFileName = "kafkabpl.lock"

type dirLock struct {
	f *os.File
}

func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("embedded: data dir lock: %w", err)
	}
	// flock locks belong to the open file, so a second cluster in this
	// same process is refused as well.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("embedded: %w: %s is used by another running cluster", ErrDataDirInUse, dir)
		}
		return nil, fmt.Errorf("embedded: data dir lock %s: %w", path, err)
	}
	return &dirLock{f: f}, nil
}

// release unlocks; nil-safe so that clusters without a data dir need no
// check.
func (l *dirLock) release() {
	if l == nil {
		return
	}
	// Closing the file drops the flock.
	l.f.Close()
}
