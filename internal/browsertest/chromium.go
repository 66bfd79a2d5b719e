package browsertest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// loopbackURL parses serverURL, which must be an http URL on a loopback
// address; fn names the caller in the error.
func loopbackURL(fn, serverURL string) (*url.URL, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("%s: server URL %q is not an http URL", fn, serverURL)
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%s: server URL %q: %w", fn, serverURL, ErrNotLoopback)
	}
	return u, nil
}

// chromium is a headless chromium started by startChromium, in a process
// group of its own with a profile directory of its own.
type chromium struct {
	cmd     *exec.Cmd
	profile string
	out     syncBuffer
	exited  chan error    // cmd.Wait's answer, once
	done    chan struct{} // closed when cmd.Wait returns
}

// startChromium starts bin headless on pageURL with Flags, resolving no
// host name but localhost, 127.0.0.1 and serverHost. files become the
// child's descriptors 3, 4, ... and extra are more flags.
func startChromium(bin, serverHost, pageURL string, files []*os.File, extra ...string) (*chromium, error) {
	profile, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		return nil, err
	}
	rules := "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE " + serverHost
	args := append(append([]string{}, Flags...), extra...)
	args = append(args, "--host-resolver-rules="+rules,
		"--user-data-dir="+filepath.Join(profile, "profile"), pageURL)
	c := &chromium{cmd: exec.Command(bin, args...), profile: profile, exited: make(chan error, 1), done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	c.cmd.ExtraFiles = files
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, fmt.Errorf("browsertest: starting %s: %w", bin, err)
	}
	go func() {
		err := c.cmd.Wait()
		close(c.done)
		c.exited <- err
	}()
	return c, nil
}

// stop ends chromium and every process it started (its own group), waits
// up to 10 s for it, and removes its profile.
func (c *chromium) stop() {
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
	os.RemoveAll(c.profile)
}
