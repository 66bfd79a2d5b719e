package kafkabpl

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/brain4it/kafkabpl/internal/testdial"
	"github.com/twmb/franz-go/pkg/kgo"
)

// brokerDialer makes a client's connections to the brokers. It differs
// from kgo's own dialer in one way: a connection refused by an address
// that accepted one before (a broker that was killed or is restarting) is
// reported as a temporary failure, a timeout in kgo's terms, which kgo
// retries for the request's time, as Java's clients retry a broker that
// went away. kgo treats a refused dial as final in places: a group's
// FindCoordinator sent to the address of a killed coordinator failed the
// member's heartbeat and ended its session ("unable to join group
// session: unable to dial"), and every partition stalled until it had
// rejoined. A refusal by an address never reached (a mistyped server) is
// left as kgo treats it: there is no broker there to come back.
//
// Once the handle is being destroyed, refusals are final again: leaving
// the group is best effort, and a consumer whose brokers are gone is
// destroyed at once, not after request-timeout (the group drops the member
// when its session ends).
//
// kgo refreshes metadata when a produce's dial is refused, but not after a
// temporary failure, so the dialer asks for the refresh itself: at once,
// as Java's clients ask when a connection fails, and then every 100 ms
// (MetadataMinAge) for as long as refusals go on, and a second more. A
// killed broker's partitions move when the controller fences it (9 s by
// default), and this is how soon the client sees the move: without it,
// only some of kgo's retries ask, and only as often as they come.
// The cost, while a broker that was reached refuses connections: ten
// metadata requests a second, to the live brokers, and each retry after
// retry-backoff without doubling, a request's first after a tenth of it
// (see backoff and refusing).
type brokerDialer struct {
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	timeout time.Duration
	tls     *tls.Config // nil for plaintext

	client  atomic.Pointer[kgo.Client] // set once the client exists
	closing atomic.Bool
	stop    chan struct{} // closed by close: the watch ends
	once    sync.Once
	watches sync.WaitGroup // the watch's goroutine, which close waits for

	mu          sync.Mutex
	reached     map[string]bool // addresses that accepted a connection
	lastRefresh time.Time
	lastRefusal time.Time // by an address reached before
	watching    bool      // watch runs
}

// watchAfter is how long the dialer goes on asking for metadata after the
// last refusal: more than kgo's retries of a dead broker are apart.
const watchAfter = time.Second

// metadataRefreshEvery bounds the metadata requests that refused dials
// ask for; kgoOpts' MetadataMinAge.
const metadataRefreshEvery = 100 * time.Millisecond

func newBrokerDialer(c *config) *brokerDialer {
	d := &brokerDialer{
		dial:    (&net.Dialer{}).DialContext,
		timeout: min(10*time.Second, c.requestTimeout),
		reached: map[string]bool{},
		stop:    make(chan struct{}),
	}
	switch {
	case c.dial != nil:
		d.dial = c.dial // Library.SetDialer's
	case testdial.Dial != nil:
		d.dial = testdial.Dial // tests: loopback addresses only
	}
	if c.tls != nil {
		d.tls = c.tls.Clone()
	}
	return d
}

// setClient gives the dialer the client whose metadata it refreshes.
func (d *brokerDialer) setClient(cl *kgo.Client) { d.client.Store(cl) }

// close makes refusals final from now on (see brokerDialer), and ends the
// watch for metadata, if one runs, waiting for its goroutine to return: it
// returns at once when told. closing is set under d.mu, where failed
// starts a watch only while it is unset, so none starts after the Wait.
func (d *brokerDialer) close() {
	d.mu.Lock()
	d.closing.Store(true)
	d.mu.Unlock()
	d.once.Do(func() { close(d.stop) })
	d.watches.Wait()
}

// DialContext has the signature of kgo.Dialer's function.
func (d *brokerDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	conn, err := d.dial(ctx, network, addr)
	if err != nil {
		return nil, d.failed(addr, err)
	}
	if d.tls != nil {
		if conn, err = d.handshake(ctx, conn, addr); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	d.reached[addr] = true
	d.mu.Unlock()
	return conn, nil
}

// handshake runs the TLS handshake on conn, naming the server by addr's
// host unless the config names it.
func (d *brokerDialer) handshake(ctx context.Context, conn net.Conn, addr string) (net.Conn, error) {
	cfg := d.tls
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("unable to split host:port for dialing: %w", err)
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// failed returns the error of a failed dial to addr: a refusal from an
// address reached before becomes temporary, and asks for metadata.
func (d *brokerDialer) failed(addr string, err error) error {
	var op *net.OpError
	if d.closing.Load() || !errors.As(err, &op) || op.Op != "dial" || !errors.Is(err, syscall.ECONNREFUSED) {
		return err
	}
	d.mu.Lock()
	reached := d.reached[addr]
	refresh := reached && time.Since(d.lastRefresh) >= metadataRefreshEvery
	if refresh {
		d.lastRefresh = time.Now()
	}
	if reached {
		d.lastRefusal = time.Now()
		if !d.watching && !d.closing.Load() {
			d.watching = true
			d.watches.Go(d.watch)
		}
	}
	d.mu.Unlock()
	if !reached {
		return err
	}
	if refresh {
		d.refresh()
	}
	temp := *op
	temp.Err = refusedForNow{op.Err}
	return &temp
}

// refusing reports whether an address reached before refuses connections
// now: whether the watch runs. The client's retries wait retry-backoff
// meanwhile, without doubling, a request's first a tenth of it (see
// backoff).
func (d *brokerDialer) refusing() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.watching
}

// refresh asks the client for fresh metadata.
func (d *brokerDialer) refresh() {
	if cl := d.client.Load(); cl != nil {
		cl.ForceMetadataRefresh()
	}
}

// watch asks for metadata every metadataRefreshEvery until watchAfter has
// passed since the last refusal, or the dialer is closed.
func (d *brokerDialer) watch() {
	tick := time.NewTicker(metadataRefreshEvery)
	defer tick.Stop()
	for {
		select {
		case <-d.stop:
			d.mu.Lock()
			d.watching = false
			d.mu.Unlock()
			return
		case <-tick.C:
		}
		d.mu.Lock()
		quiet := time.Since(d.lastRefusal) > watchAfter
		if quiet {
			d.watching = false
		} else {
			d.lastRefresh = time.Now()
		}
		d.mu.Unlock()
		if quiet {
			return
		}
		d.refresh()
	}
}

// refusedForNow is a refused connection that kgo is to retry: it reports
// itself as a timeout, and unwraps to the refusal (errors.Is finds
// syscall.ECONNREFUSED).
type refusedForNow struct{ err error }

func (r refusedForNow) Error() string   { return r.err.Error() }
func (r refusedForNow) Unwrap() error   { return r.err }
func (r refusedForNow) Timeout() bool   { return true }
func (r refusedForNow) Temporary() bool { return true }
