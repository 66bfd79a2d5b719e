package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/brain4it/kafkabpl/embedded"
)

// errUsage marks an error in the command line, as opposed to a failure of
// the command: it exits with exitUsage.
var errUsage = errors.New("usage error")

// usage describes a subcommand for its --help.
type usage struct {
	synopsis string // after "usage: kafkabpl "
	about    string // a paragraph, may be empty
}

// newFlagSet returns a flag set that reports nothing itself: parse prints
// errors and usage where they belong.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("kafkabpl "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args with fs, allowing flags after positional arguments
// ("run script.bpl --embedded"); "--" ends the flags. On -h/--help it prints
// the usage to stdout; on a bad flag, the error and the usage to stderr.
// When done is true the command must return code at once.
func parse(fs *flag.FlagSet, u usage, args []string, stdout, stderr io.Writer) (positional []string, code int, done bool) {
	positional, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout, fs, u)
		return nil, exitOK, true
	case err != nil:
		return nil, usageError(stderr, fs, u, err), true
	}
	return positional, exitOK, false
}

// usageError prints err and the usage to stderr and returns exitUsage.
func usageError(stderr io.Writer, fs *flag.FlagSet, u usage, err error) int {
	fmt.Fprintf(stderr, "%s: %v\n\n", fs.Name(), err)
	printUsage(stderr, fs, u)
	return exitUsage
}

func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// flag.Parse stopped at a non-flag, or just after "--" (then
		// everything left is positional).
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// printUsage prints the synopsis, the paragraph and the flags, written
// --flag as the docs do (flag's own PrintDefaults writes -flag).
func printUsage(w io.Writer, fs *flag.FlagSet, u usage) {
	fmt.Fprintf(w, "usage: kafkabpl %s\n", u.synopsis)
	if u.about != "" {
		fmt.Fprintf(w, "\n%s\n", u.about)
	}
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		name, text := flag.UnquoteUsage(f)
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			name = ""
		}
		fmt.Fprintf(&b, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(&b, " %s", name)
		}
		fmt.Fprintf(&b, "\n        %s", text)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	})
	if b.Len() > 0 {
		fmt.Fprintf(w, "\nflags:\n%s", b.String())
	}
}

// clusterFlags are the flags run and eval share: which cluster the script
// talks to, or how to start an embedded one.
type clusterFlags struct {
	servers  string
	embedded bool
	port     int
	brokers  int
	dataDir  string
	registry registryFlag
}

// register defines the flags on fs. The embedded cluster of run and eval
// defaults to one broker (broker's own default is 3): a script needs no more
// unless it says so.
func (cf *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&cf.servers, "servers", "", "Kafka bootstrap servers, `LIST` of host:port joined by commas (default $KAFKA_SERVERS)")
	fs.BoolVar(&cf.embedded, "embedded", false, "start an in-process cluster on 127.0.0.1 first")
	fs.IntVar(&cf.port, "port", embedded.DefaultPort, "with --embedded: the first broker's `PORT`; 0 picks free ports")
	fs.IntVar(&cf.brokers, "brokers", 1, "with --embedded: number of brokers `N`")
	fs.StringVar(&cf.dataDir, "data-dir", "", "with --embedded: keep the cluster's state in `DIR` across runs")
	cf.registry.register(fs)
}

// registryFlag is --registry-port: where the embedded cluster's schema
// registry listens.
type registryFlag struct {
	port     int
	explicit bool // --registry-port given (see seen)
}

func (r *registryFlag) register(fs *flag.FlagSet) {
	fs.IntVar(&r.port, "registry-port", embedded.DefaultRegistryPort, "the schema registry's `PORT`; 0 picks a free one (so does --port 0, and a busy 8081)")
}

// start starts the cluster with opts and its schema registry: on
// --registry-port when given, else on 8081, or on a free port when
// --port is 0 or 8081 is taken (said on stderr).
// seen records whether fs (parsed) was given --registry-port.
func (r *registryFlag) seen(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) { r.explicit = r.explicit || f.Name == "registry-port" })
}

func (r *registryFlag) start(port int, stderr io.Writer, opts []embedded.Option) (*embedded.Cluster, error) {
	rp := r.port
	if !r.explicit && port == 0 {
		rp = 0
	}
	c, err := embedded.Start(append(opts, embedded.SchemaRegistry(rp))...)
	if errors.Is(err, embedded.ErrRegistryPortInUse) && !r.explicit && rp != 0 {
		if stderr != nil {
			fmt.Fprintf(stderr, "kafkabpl: port %d is taken: the schema registry takes a free port\n", rp)
		}
		c, err = embedded.Start(append(opts, embedded.SchemaRegistry(0))...)
	}
	return c, err
}

// check reports flags that only make sense with --embedded given without
// it; call it after parsing. The error wraps errUsage.
func (cf *clusterFlags) check(fs *flag.FlagSet) error {
	cf.registry.seen(fs)
	if cf.embedded {
		return nil
	}
	var stray []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "port", "brokers", "data-dir", "registry-port":
			stray = append(stray, "--"+f.Name)
		}
	})
	if len(stray) > 0 {
		return fmt.Errorf("%w: %s only apply with --embedded", errUsage, strings.Join(stray, ", "))
	}
	return nil
}

// connect starts the embedded cluster when --embedded is given and returns
// the servers a script should use (the BPL variable kafka-servers): those of
// --servers, else the embedded cluster's, else $KAFKA_SERVERS (getenv), else
// "" (none known; scripts must name their servers). The embedded cluster
// wins over the environment because --embedded is explicit; a stray
// KAFKA_SERVERS must not send a test script to a real cluster. Close the
// returned cluster (nil without --embedded) when the script is done. Errors
// from an embedded cluster that cannot start (such as a busy port, which
// suggests --port 0) wrap the embedded package's sentinels; a bad flag value
// also wraps errUsage.
func (cf *clusterFlags) connect(getenv func(string) string) (servers string, c *embedded.Cluster, err error) {
	if cf.embedded {
		opts := []embedded.Option{embedded.Port(cf.port), embedded.Brokers(cf.brokers)}
		if cf.dataDir != "" {
			opts = append(opts, embedded.DataDir(cf.dataDir))
		}
		c, err = cf.registry.start(cf.port, nil, opts)
		if errors.Is(err, embedded.ErrInvalidOption) {
			err = fmt.Errorf("%w: %w", errUsage, err)
		}
		if err != nil {
			return "", nil, err
		}
	}
	switch {
	case cf.servers != "":
		servers = cf.servers
	case c != nil:
		servers = c.Servers()
	default:
		servers = getenv("KAFKA_SERVERS")
	}
	return servers, c, nil
}

// stringList is a repeatable flag; each use may also list several values
// separated by commas (Kafka names never contain one).
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}
