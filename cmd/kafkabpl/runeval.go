package main

import (
	"context"
	"fmt"
	"io"
)

// run and eval: flag parsing is in place (clusterFlags); the BPL evaluation
// is still to be written.

var runUsage = usage{
	synopsis: "run [--servers LIST] [--embedded] [--port N] [--brokers N] [--data-dir DIR] FILE|-",
	about: `Runs a BPL script from FILE, or from stdin with -, printing each non-null
top-level result. The variable kafka-servers holds --servers, else the
embedded cluster's servers, else $KAFKA_SERVERS.`,
}

var evalUsage = usage{
	synopsis: "eval [--servers LIST] [--embedded] [--port N] [--brokers N] [--data-dir DIR] 'EXPR'",
	about: `Evaluates the BPL expressions in EXPR, printing each non-null result. The
variable kafka-servers is set as for run.`,
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return notYet(ctx, "run", runUsage, args, stdout, stderr)
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return notYet(ctx, "eval", evalUsage, args, stdout, stderr)
}

// notYet parses the shared flags and one positional argument, then reports
// that the command does not exist yet.
func notYet(_ context.Context, name string, u usage, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(name)
	var cf clusterFlags
	cf.register(fs)
	positional, code, done := parse(fs, u, args, stdout, stderr)
	if done {
		return code
	}
	if err := cf.check(fs); err != nil {
		return usageError(stderr, fs, u, err)
	}
	if len(positional) != 1 {
		return usageError(stderr, fs, u, fmt.Errorf("want exactly one argument, got %d", len(positional)))
	}
	fmt.Fprintf(stderr, "kafkabpl %s: not yet implemented\n", name)
	return exitUsage
}
