package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/server"
)

var serveUsage = usage{
	synopsis: "serve [--port 9999] [--listen ADDR --access-key KEY] [--advertise URL] [--data-dir DIR] [--servers LIST] [--embedded] [--broker-port N] [--brokers N] [--broker-data-dir DIR] [--metrics ADDR]",
	about: `Runs a brain4it server: brain4it's manager (desktop, Android, web) and
its dashboards connect to http://localhost:PORT and run BPL modules,
each with the kafka-* functions and brain4it's module functions. It
listens on 127.0.0.1 only, unless --listen gives another address, which
requires --access-key. With --data-dir, modules are saved there
(DIR/MODULE/head.snp, brain4it's layout) and loaded, and their start
run, when the server starts. The variables kafka-servers and
schema-registry-url are set in every module as for run (--servers, else
--embedded's cluster and its schema registry, on port 8081 or a free one,
else $KAFKA_SERVERS and $SCHEMA_REGISTRY_URL). It prints "listening on ADDR" once it accepts requests;
SIGINT or SIGTERM stops it cleanly: monitors end, modules run their stop
and are saved. Each module's stateful streams advertise URL/MODULE
(--advertise, else http://ADDR where it listens) in their group, and a
store query for a key that another serve process of the group holds is
forwarded there, with the module's access key. Unless GOGC is set, the
garbage collector lets the heap grow to 16 MiB before it collects (see
gcfloor.go): a small server then spends less time collecting, for some
10 MiB more memory.`,
}

// serveFlags are serve's own flags; the cluster flags are clusterFlags'
// under names that do not clash with --port and --data-dir.
type serveFlags struct {
	port      int
	listen    string
	accessKey string
	dataDir   string
	advertise string
	cluster   clusterFlags
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve")
	var sf serveFlags
	fs.IntVar(&sf.port, "port", 9999, "the HTTP `PORT` (0 picks a free one)")
	fs.StringVar(&sf.listen, "listen", "", "listen on `ADDR` (host or host:port) instead of 127.0.0.1; needs --access-key")
	fs.StringVar(&sf.accessKey, "access-key", "", "the server's access `KEY` (brain4it's access-key header); default $KAFKABPL_ACCESS_KEY")
	fs.StringVar(&sf.advertise, "advertise", "", "the `URL` other serve processes forward store queries to (default http://ADDR where it listens)")
	fs.StringVar(&sf.dataDir, "data-dir", "", "keep the modules' snapshots, and their stateful streams' state (under DIR/.streams), in `DIR` (default: in memory, lost at exit)")
	cf := &sf.cluster
	fs.StringVar(&cf.servers, "servers", "", "Kafka bootstrap servers, `LIST` of host:port joined by commas (default $KAFKA_SERVERS)")
	fs.BoolVar(&cf.embedded, "embedded", false, "start an in-process cluster on 127.0.0.1 first")
	fs.IntVar(&cf.port, "broker-port", embedded.DefaultPort, "with --embedded: the first broker's `PORT`; 0 picks free ports")
	fs.IntVar(&cf.brokers, "brokers", 1, "with --embedded: number of brokers `N`")
	fs.StringVar(&cf.dataDir, "broker-data-dir", "", "with --embedded: keep the cluster's state in `DIR` across runs")
	var mf metricsFlag
	mf.register(fs)
	positional, code, done := parse(fs, serveUsage, args, stdout, stderr)
	if done {
		return code
	}
	if len(positional) != 0 {
		return usageError(stderr, fs, serveUsage, fmt.Errorf("serve takes no arguments, got %q", positional[0]))
	}
	if sf.accessKey == "" {
		sf.accessKey = os.Getenv("KAFKABPL_ACCESS_KEY")
	}
	if err := sf.check(fs); err != nil {
		return usageError(stderr, fs, serveUsage, err)
	}
	addr := sf.address()
	defer startCPUProfile(os.Getenv, stderr)()        // KAFKABPL_CPUPROFILE (profile.go)
	defer startHeapFloor(serveHeapFloor, os.Getenv)() // gcfloor.go

	servers, cluster, err := cf.connect(os.Getenv)
	if errors.Is(err, errUsage) {
		return usageError(stderr, fs, serveUsage, err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kafkabpl serve: %v\n", err)
		return exitFail
	}
	if cluster != nil {
		defer cluster.Close()
	}

	cfg := server.Config{AccessKey: sf.accessKey, Servers: servers, RegistryURL: registryURL(cluster, os.Getenv), Log: stderr}
	if sf.dataDir != "" {
		cfg.Store = server.DirStore{Dir: sf.dataDir}
		cfg.StateDir = filepath.Join(sf.dataDir, ".streams") // not a module's name
	}
	m, stopMetrics, err := mf.start(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kafkabpl serve: %v\n", err)
		return exitFail
	}
	defer stopMetrics()
	if m != nil {
		cfg.OnLibrary = func(_ string, lib *kafkabpl.Library) { m.Watch(lib) }
		cfg.Observer = m
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "kafkabpl serve: %v\n", err)
		return exitFail
	}
	cfg.URL = sf.advertise
	if cfg.URL == "" {
		cfg.URL = "http://" + ln.Addr().String()
		if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
			fmt.Fprintf(stderr, "kafkabpl serve: warning: its streams advertise %s, which other hosts cannot reach: give --advertise with the address they can\n", cfg.URL)
		}
	}
	srv := server.New(cfg)
	if err := srv.Start(ctx); err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "kafkabpl serve: %v\n", err)
		return exitFail
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 1 << 20}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())

	failed := false
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintf(stderr, "kafkabpl serve: %v\n", err)
		failed = true
	}
	fmt.Fprintln(stderr, "kafkabpl serve: stopping")
	// Monitor streams end, the requests in flight get 10 s to finish,
	// then the modules stop and are saved with what those did.
	srv.CloseMonitors()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	hctx, hcancel := context.WithTimeout(sctx, 10*time.Second)
	defer hcancel()
	hs.Shutdown(hctx)
	if err := srv.Shutdown(sctx); err != nil {
		failed = true
	}
	if failed {
		return exitFail
	}
	return exitOK
}

// check refuses --listen without an access key, and the embedded-only
// flags without --embedded. The error wraps errUsage.
func (sf *serveFlags) check(fs *flag.FlagSet) error {
	if sf.listen != "" && sf.accessKey == "" {
		return fmt.Errorf("%w: --listen exposes the server beyond this machine and needs --access-key", errUsage)
	}
	if u, err := url.Parse(sf.advertise); sf.advertise != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return fmt.Errorf("%w: --advertise %q: want an http or https URL with a host, such as http://10.0.0.5:9999", errUsage, sf.advertise)
	}
	if sf.port < 0 || sf.port > 65535 {
		return fmt.Errorf("%w: --port %d: want 0 to 65535", errUsage, sf.port)
	}
	if sf.cluster.embedded {
		return nil
	}
	var stray []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "broker-port", "brokers", "broker-data-dir":
			stray = append(stray, "--"+f.Name)
		}
	})
	if len(stray) > 0 {
		return fmt.Errorf("%w: %s only apply with --embedded", errUsage, strings.Join(stray, ", "))
	}
	return nil
}

// address is where to listen: 127.0.0.1:PORT, or --listen (with --port
// when it has no port).
func (sf *serveFlags) address() string {
	if sf.listen == "" {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(sf.port))
	}
	if _, _, err := net.SplitHostPort(sf.listen); err == nil {
		return sf.listen
	}
	return net.JoinHostPort(strings.Trim(sf.listen, "[]"), strconv.Itoa(sf.port))
}
