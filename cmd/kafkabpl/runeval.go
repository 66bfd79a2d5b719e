package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/functions"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

var runUsage = usage{
	synopsis: "run [--servers LIST] [--embedded] [--port N] [--brokers N] [--data-dir DIR] [--registry-port N] [--metrics ADDR] [--state-dir DIR] FILE|-",
	about: `Runs a BPL script from FILE, or from stdin with -, evaluating each top-level
expression in order and printing each non-null result in BPL, one per line.
The variable kafka-servers holds --servers, else the embedded cluster's
servers, else $KAFKA_SERVERS; schema-registry-url holds the embedded
cluster's schema registry (on port 8081, or --registry-port), else
$SCHEMA_REGISTRY_URL. With --embedded a cluster starts first on
127.0.0.1 (from port 9092, so scripts naming localhost:9092 run unchanged),
creating topics on first use with one partition. An uncaught exception
prints "error: TYPE: message (FILE:LINE)" to stderr and exits 1. Streams
(kafka-stream), executors (spawn) and timer tasks (timer-schedule) the
script leaves run on after its last expression, until they end or
SIGINT/SIGTERM stops them (streams cleanly: the batch in hand is
committed). Exit status: 0 when the script ran to its end and what it
left running ended or was stopped by the signal (as broker and serve exit
0 on one: a signal is how a long-running job is stopped); 1 when it threw,
a stream failed, or a handle did not close cleanly; 128+N (130 for
SIGINT, 143 for SIGTERM) when the signal interrupted the script itself
before its end (a status loop's sleep, say) and nothing failed, as a
shell reports a command a signal ended, so that "kafkabpl run x && next"
and CI do not take an interrupted script for a finished one (a loop run
in spawn is left running: the signal then ends the run with 0). With
--state-dir, stateful streams keep their state on disk under DIR (a
stream's config "state-dir" says so for one stream), and a run started
again reads only the changelog after it.`,
}

var evalUsage = usage{
	synopsis: "eval [--servers LIST] [--embedded] [--port N] [--brokers N] [--data-dir DIR] [--registry-port N] [--metrics ADDR] [--state-dir DIR] 'EXPR'",
	about: `Evaluates the BPL expressions in EXPR as run does a file, printing each
non-null result. The variable kafka-servers is set as for run.`,
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return script(ctx, "run", runUsage, args, stdout, stderr, func(arg string) (file, src string, err error) {
		if arg == "-" {
			b, err := io.ReadAll(os.Stdin)
			return "stdin", string(b), err
		}
		b, err := os.ReadFile(arg)
		return arg, string(b), err
	})
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return script(ctx, "eval", evalUsage, args, stdout, stderr, func(arg string) (string, string, error) {
		return "eval", arg, nil
	})
}

// script is run and eval: parse the flags, read the source with read,
// start the embedded cluster if asked, evaluate, and destroy every handle
// the script left.
func script(ctx context.Context, name string, u usage, args []string, stdout, stderr io.Writer, read func(arg string) (file, src string, err error)) int {
	fs := newFlagSet(name)
	var cf clusterFlags
	var mf metricsFlag
	var stateDir string
	cf.register(fs)
	mf.register(fs)
	fs.StringVar(&stateDir, "state-dir", "", "keep stateful streams' state on disk under `DIR` (default: in memory)")
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
	file, src, err := read(positional[0])
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return exitFail
	}
	defer startCPUProfile(os.Getenv, stderr)() // KAFKABPL_CPUPROFILE (profile.go)
	servers, cluster, err := cf.connect(os.Getenv)
	if errors.Is(err, errUsage) {
		return usageError(stderr, fs, u, err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return exitFail
	}
	if cluster != nil {
		defer cluster.Close()
	}

	m, stopMetrics, err := mf.start(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return exitFail
	}
	defer stopMetrics()
	lib := kafkabpl.New()
	lib.SetLogOutput(stderr)
	if stateDir != "" {
		stream.Of(lib).SetStateDir(stateDir)
	}
	if m != nil {
		m.Watch(lib)
	}
	in := bpl.New(stdout)
	in.SetErrorOutput(stderr)
	for fname, f := range functions.Table(lib) {
		in.Define(fname, f)
	}
	if servers != "" {
		in.SetGlobal("kafka-servers", servers)
	}
	if url := registryURL(cluster, os.Getenv); url != "" {
		in.SetGlobal("schema-registry-url", url)
	}
	runErr := in.Run(ctx, file, src, func(v any) {
		if v != nil {
			fmt.Fprintln(stdout, value.Format(v))
		}
	})
	// What the script started goes on after its last expression, until
	// it ends or the user stops the command: its streams, executors and
	// timer tasks.
	if runErr == nil && (in.Busy() > 0 || stream.Of(lib).Running() > 0) {
		fmt.Fprintf(stderr, "%s: the script's streams, executors and timer tasks run on; Ctrl-C stops them\n", name)
		waitStarted(ctx, in, lib)
	}
	failed := stream.Of(lib).Failed()
	in.Close()
	// Destroying what the script left delivers what its producers buffered
	// and commits what its consumers polled.
	closeErr := lib.Close(context.WithoutCancel(ctx))

	var ex *bpl.Exception
	var syn *value.SyntaxError
	sig, signalledStop := signalled(ctx)
	switch {
	case signalledStop && errors.As(runErr, &ex) && ex.Type == "Interrupted":
		// The signal cut the script itself short (a status loop's sleep,
		// say): not a failure of its own, but not a run to its end either.
		for _, err := range failed {
			fmt.Fprintf(stderr, "error: %s: %v (%s: at the end of the run)\n", value.ErrorType(err), err, file)
		}
		if closeErr != nil {
			printCloseErrors(stderr, file, closeErr)
		}
		if closeErr != nil || len(failed) > 0 {
			return exitFail
		}
		fmt.Fprintf(stderr, "%s: %s interrupted the script (%s:%d); its streams and clients stopped cleanly\n", name, signalName(sig), file, ex.Line)
		return exitSignal + int(sig)
	case errors.As(runErr, &ex):
		fmt.Fprintf(stderr, "error: %s\n", ex.Error())
		return exitFail
	case errors.As(runErr, &syn):
		fmt.Fprintf(stderr, "error: SyntaxError: column %d: %s (%s:%d)\n", syn.Column, syn.Msg, file, syn.Line)
		return exitFail
	case runErr != nil:
		fmt.Fprintf(stderr, "error: %v\n", runErr)
		return exitFail
	case closeErr != nil || len(failed) > 0:
		for _, err := range failed {
			fmt.Fprintf(stderr, "error: %s: %v (%s: at the end of the run)\n", value.ErrorType(err), err, file)
		}
		if closeErr != nil {
			printCloseErrors(stderr, file, closeErr)
		}
		return exitFail
	}
	return exitOK
}

// registryURL is the BPL variable schema-registry-url: the embedded
// cluster's schema registry, else $SCHEMA_REGISTRY_URL, else "" (none).
func registryURL(c *embedded.Cluster, getenv func(string) string) string {
	if c != nil {
		return c.RegistryURL()
	}
	return getenv("SCHEMA_REGISTRY_URL")
}

// waitStarted waits until the script's streams, executors and timer tasks
// have all ended, or ctx has (a signal).
func waitStarted(ctx context.Context, in *bpl.Interp, lib *kafkabpl.Library) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for in.Busy() > 0 || stream.Of(lib).Running() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// printCloseErrors reports what the script left and could not be
// destroyed cleanly (lib.Close's joined errors): one line per handle, in
// the form of an uncaught exception's, with the end of the run for a line.
func printCloseErrors(w io.Writer, file string, err error) {
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, err := range errs {
		fmt.Fprintf(w, "error: %s: %v (%s: at the end of the run)\n", value.ErrorType(err), err, file)
	}
}
