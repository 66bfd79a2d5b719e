//go:build !unix

package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir, where flock is missing, relies on the database's own lock:
// a second process fails to open it, without the holder's name.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	return f, nil
}

func unlockDir(f *os.File) { f.Close() }
