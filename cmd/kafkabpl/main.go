// Command kafkabpl runs BPL scripts that use Kafka, and can start an
// embedded Kafka-compatible cluster (franz-go's kfake) so that no broker
// needs to be installed.
//
//	kafkabpl run [--servers LIST] [--embedded] [--port N] [--brokers N] [--data-dir DIR] [--state-dir DIR] FILE|-
//	kafkabpl eval [same flags] 'EXPR'
//	kafkabpl test [--run PATTERN] FILE...
//	kafkabpl broker [--port 9092] [--brokers 3] [--partitions 1] [--no-auto-create] [--data-dir DIR] [--topic NAME]...
//	kafkabpl serve [--port 9999] [--listen ADDR --access-key KEY] [--advertise URL] [--data-dir DIR] [--servers LIST] [--embedded] [--broker-port N] [--brokers N] [--broker-data-dir DIR]
//	kafkabpl version
//
// Flags may be written -flag or --flag, and -flag=value or -flag value.
// Every command takes -h / --help, which prints its usage to stdout. Exit
// status: 0 on success, 1 when the command fails, 2 on a usage error (an
// unknown command or flag, a bad flag value, a missing argument), and
// 128+N (130 for SIGINT, 143 for SIGTERM, as a shell reports a command a
// signal ended) when a signal interrupted a script of run or eval before
// its end while nothing failed (see run --help).
//
// broker runs a cluster on 127.0.0.1 until SIGINT or SIGTERM, printing one
// line to stdout as soon as it accepts connections:
//
//	listening on 127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094
//
// On the signal it closes cleanly, writing its state under --data-dir when
// given, and exits 0; a second signal during that kills it at once. It
// behaves like a stock Kafka broker: topics are created on first use with 1
// partition unless --no-auto-create or --partitions say otherwise. With
// --data-dir, topics, records and committed group offsets survive a restart,
// and kill -9 too, topics created on first use included (see package
// embedded).
// serve runs a brain4it server for brain4it's manager and dashboards on
// 127.0.0.1:9999 until SIGINT or SIGTERM (see package server), printing
// "listening on ADDR" once it accepts requests; on the signal its modules
// run their stop code and are saved under --data-dir.
//
// Besides the flags above, broker takes --sync-writes (fsync each write, for
// durability against a machine crash) and --log-level (none, error, warn,
// info, debug; default warn, to stderr).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // the command ran and failed
	exitUsage = 2 // the command line is wrong
	// exitSignal plus the signal's number: a signal interrupted a script
	// before its end, and nothing failed (the shell's convention for a
	// command a signal ended: 130 for SIGINT, 143 for SIGTERM).
	exitSignal = 128
)

// command is one subcommand of kafkabpl.
type command struct {
	name    string
	summary string // one line in the top-level usage
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands is the table of subcommands, in the order the usage lists them.
// To add one, add a row here and a func with the signature of run.
var commands = []command{
	{"run", "run a BPL script (FILE, or - for stdin)", runRun},
	{"eval", "evaluate BPL expressions given as an argument", runEval},
	{"test", "run BPL test scripts in virtual time (streams, windows, timers)", runTest},
	{"broker", "run an embedded Kafka-compatible cluster until interrupted", runBroker},
	{"serve", "run a brain4it server (HTTP API, modules, monitors) until interrupted", runServe},
	{"version", "print the versions of kafkabpl and franz-go", runVersion},
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		sig, ok := <-sigs
		// Once the first signal arrived, restore the default handling, so
		// a second one kills a shutdown that takes too long.
		signal.Stop(sigs)
		if s, isSys := sig.(syscall.Signal); ok && isSys {
			cancel(stoppedBy{s})
		}
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	close(sigs)
	os.Exit(code)
}

// stoppedBy is the cause of the command's context when a signal (SIGINT,
// SIGTERM) stopped it.
type stoppedBy struct{ sig syscall.Signal }

func (s stoppedBy) Error() string { return "stopped by " + signalName(s.sig) }

// signalName is SIGINT for syscall.SIGINT, as kill -l names signals.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// signalled returns the signal that stopped ctx, if one did.
func signalled(ctx context.Context) (syscall.Signal, bool) {
	var s stoppedBy
	if errors.As(context.Cause(ctx), &s) {
		return s.sig, true
	}
	return 0, false
}

// run runs the command line args (without the program name) and returns the
// exit status. A subcommand that runs until interrupted (broker) stops when
// ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "kafkabpl: no command given")
		fmt.Fprintln(stderr)
		mainUsage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		// "help CMD" is "CMD --help".
		if args[0] == "help" && len(args) > 1 {
			if c, ok := lookup(args[1]); ok {
				return c.run(ctx, []string{"--help"}, stdout, stderr)
			}
			fmt.Fprintf(stderr, "kafkabpl: unknown command %q\n\n", args[1])
			mainUsage(stderr)
			return exitUsage
		}
		mainUsage(stdout)
		return exitOK
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "kafkabpl: unknown command %q\n\n", args[0])
		mainUsage(stderr)
		return exitUsage
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func mainUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: kafkabpl COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'kafkabpl COMMAND --help' for the flags of a command.")
}
