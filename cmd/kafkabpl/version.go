package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

var versionUsage = usage{
	synopsis: "version",
	about:    "Prints the versions of kafkabpl, franz-go, kfake and Go, one per line.",
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version")
	positional, code, done := parse(fs, versionUsage, args, stdout, stderr)
	if done {
		return code
	}
	if len(positional) > 0 {
		return usageError(stderr, fs, versionUsage, fmt.Errorf("unexpected argument %q", positional[0]))
	}
	main, franz, kfake := versions()
	fmt.Fprintf(stdout, "kafkabpl %s\nfranz-go %s\nkfake %s\ngo %s\n", main, franz, kfake, runtime.Version())
	return exitOK
}

// versions reads the module versions the binary was built with. Built from
// a checkout (go build, go run, go test) the main module's version is
// "(devel)" or a VCS pseudo-version; "(devel)" and a missing build info
// print as "devel", a missing dependency as "unknown".
func versions() (main, franz, kfake string) {
	main, franz, kfake = "devel", "unknown", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return main, franz, kfake
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		main = v
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		switch d.Path {
		case "github.com/twmb/franz-go":
			franz = d.Version
		case "github.com/twmb/franz-go/pkg/kfake":
			kfake = d.Version
		}
	}
	return main, franz, kfake
}
