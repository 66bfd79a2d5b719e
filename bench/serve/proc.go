package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errNoProcess is returned when no process on this machine owns the
// listening socket of a server: its memory cannot be read.
var errNoProcess = errors.New("no process listens on the server's port")

// server is one brain4it-protocol server under test: started here (cmd is
// set) or already running (url only).
type server struct {
	name string
	url  string
	port int
	cmd  *exec.Cmd
	dir  string // the data directory made for it, removed at stop
	log  *os.File
	pid  int // the process that owns the listening socket, 0 if unknown
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startServer runs argv (after replacing {port} and {dir} in each word)
// in a process group of its own, its output in a log file, and waits up to
// timeout for GET / to answer.
func startServer(ctx context.Context, name string, argv []string, timeout time.Duration) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("%s: free port: %w", name, err)
	}
	dir, err := os.MkdirTemp("", "serve-bench-"+name+"-")
	if err != nil {
		return nil, err
	}
	words := make([]string, len(argv))
	for i, w := range argv {
		w = strings.ReplaceAll(w, "{port}", strconv.Itoa(port))
		words[i] = strings.ReplaceAll(w, "{dir}", filepath.Join(dir, "data"))
	}
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(words[0], words[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: starting %q: %w", name, words, err)
	}
	s := &server{name: name, url: fmt.Sprintf("http://127.0.0.1:%d", port), port: port, cmd: cmd, dir: dir, log: log}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(timeout)
	c := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case err := <-exited:
			s.cmd = nil
			s.stop()
			return nil, fmt.Errorf("%s: %q exited before answering (%v); its log: %s", name, words, err, tail(filepath.Join(dir, "server.log")))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := c.Get(s.url + "/"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s: %q did not answer GET / on port %d within %v", name, words, port, timeout)
		}
	}
	s.pid, _ = listenerPID(port)
	go func() { <-exited }() // reaped; stop kills the group
	return s, nil
}

// tail is the end of a log file, for an error message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// stop ends a server started here: SIGTERM to its process group, SIGKILL
// after 10 s. A server given by URL is left alone.
func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		pg := s.cmd.Process.Pid
		_ = syscall.Kill(-pg, syscall.SIGTERM)
		for i := 0; i < 100 && syscall.Kill(-pg, 0) == nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
		_ = syscall.Kill(-pg, syscall.SIGKILL)
		s.cmd = nil
	}
	if s.log != nil {
		s.log.Close()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// listenerPID finds the process owning the socket that listens on
// 127.0.0.1:port (or [::]:port, [::ffff:127.0.0.1]:port): the server
// itself, not a `go run` or shell wrapper around it.
func listenerPID(port int) (int, error) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			i := strings.LastIndexByte(fs[1], ':')
			p, err := strconv.ParseInt(fs[1][i+1:], 16, 32)
			if err == nil && int(p) == port {
				inodes[fs[9]] = true
			}
		}
		fh.Close()
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("port %d: %w", port, errNoProcess)
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("port %d: %w", port, errNoProcess)
}

// rss reads VmRSS and VmHWM (the kernel's peak) of pid, in KiB.
func rss(pid int) (cur, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 2 {
			continue
		}
		switch fs[0] {
		case "VmRSS:":
			cur, _ = strconv.ParseInt(fs[1], 10, 64)
		case "VmHWM:":
			peak, _ = strconv.ParseInt(fs[1], 10, 64)
		}
	}
	return cur, peak, nil
}
