//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package embedded

// On systems without flock the data dir is not locked: two clusters on one
// directory are not detected there.
type dirLock struct{}

func lockDir(string) (*dirLock, error) { return nil, nil }

func (*dirLock) release() {}
