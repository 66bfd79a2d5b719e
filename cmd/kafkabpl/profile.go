package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names the environment variable that makes serve and run
// write a CPU profile of their whole run: KAFKABPL_CPUPROFILE=FILE starts
// the profile before they connect and writes FILE when they stop (at the
// script's end, or on SIGINT or SIGTERM), for `go tool pprof`. It is a
// tool for measuring them (bench/serve, bench/clients/diskstate), not a
// user-facing flag, so the usage does not list it; profiling costs a few
// percent of CPU.
const cpuProfileEnv = "KAFKABPL_CPUPROFILE"

// startCPUProfile starts the CPU profile that getenv(cpuProfileEnv)
// asks for, if any, and returns the function that ends it and closes the
// file. A file that cannot be made, or a profile that cannot start, is
// reported on stderr and profiling is left off: the server runs anyway.
func startCPUProfile(getenv func(string) string, stderr io.Writer) (stop func()) {
	path := getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "kafkabpl: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "kafkabpl: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "kafkabpl: %s: %v\n", cpuProfileEnv, err)
		}
	}
}
