package embedded

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Group members whose JoinGroup is held (issue 40).
//
// A classic group's coordinator holds each member's JoinGroup until every
// member has rejoined or the rebalance timeout passed. Kafka keeps a member
// whose JoinGroup it holds alive, and once the rebalance completes it starts
// every member's session timer, whether or not the member's JoinGroup
// response could be sent. kfake (groups.go) differs in two ways that stall a
// group for the rebalance timeout (max.poll.interval.ms, 5 minutes by
// default) when members are killed:
//
//   - It starts a member's session timer only when the member's response
//     went out (group.reply). A new member has no timer until then, so a
//     new member killed while its JoinGroup was held, whose connection kfake
//     saw close before the response, stays in the group with no session
//     timer: the next rebalance waits for it until the rebalance timeout.
//   - It does not keep a member alive while its JoinGroup is held: the
//     session timer of its last heartbeat runs on, and when it fires, kfake
//     drops the member and never answers the JoinGroup it holds. The client
//     waits for that answer until its request times out (kgo: the rebalance
//     timeout and then some), "unable to join group session: i/o timeout".
//
// The cluster's listeners wrap each connection to make up for both, from
// the outside and without touching kfake's state:
//
//   - When the client side of a connection closes while a JoinGroup or
//     SyncGroup on it is unanswered, kfake is told of the close only once it
//     wrote the answer. So the answer always goes out (into the dead
//     connection), and kfake starts the member's session timer, which then
//     runs out: the member leaves within its session timeout.
//   - While a member's JoinGroup is held on a connection that is open, the
//     cluster heartbeats for the member every second (a Heartbeat request,
//     which kfake answers with REBALANCE_IN_PROGRESS and counts, as Kafka
//     does for a member it holds). On a cluster whose listeners need TLS or
//     SASL (KfakeOptions) these heartbeats fail and kfake's own timing
//     applies.
//
// A member held in SyncGroup, waiting for the leader's assignment, needs
// neither: kfake as this module pins it (third_party/kfake, see its
// README) keeps such a member alive, as Kafka does, and tells every member
// of a rebalance the same leader (issue 47).

// keepAliveEvery is how often a held member is heartbeat for.
const keepAliveEvery = time.Second

// groupWatch tracks the connections of a cluster's listeners.
type groupWatch struct {
	mu   sync.Mutex
	held map[*trackedConn]heldJoin // JoinGroups kfake holds, by connection

	stop chan struct{} // closed to end keepAlive
	done chan struct{} // closed when keepAlive ended
}

// heldJoin is a JoinGroup not yet answered.
type heldJoin struct {
	group, member string
	instance      *string
	since         time.Time
}

func newGroupWatch() *groupWatch {
	return &groupWatch{held: make(map[*trackedConn]heldJoin), stop: make(chan struct{}), done: make(chan struct{})}
}

// listen is the cluster's ListenFn: listen, and track what is accepted.
func (w *groupWatch) listen(network, addr string) (net.Listener, error) {
	ln, err := listen(network, addr)
	if err != nil {
		return nil, err
	}
	return &trackedListener{Listener: ln, w: w}, nil
}

// run heartbeats for held members with cl, a client of the cluster's
// own, until close, and then closes cl. The cluster makes cl before run
// starts, so that what it starts is there from Start on (tests that count
// goroutines count it before what they test).
func (w *groupWatch) run(kc *kfake.Cluster, cl *kgo.Client) {
	defer close(w.done)
	defer cl.Close()
	tick := time.NewTicker(keepAliveEvery)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		w.mu.Lock()
		var due []heldJoin
		for _, h := range w.held {
			if h.member != "" && time.Since(h.since) >= keepAliveEvery {
				due = append(due, h)
			}
		}
		w.mu.Unlock()
		for _, h := range due {
			info := kc.GroupInfo(h.group)
			if info == nil || info.State != "PreparingRebalance" {
				continue
			}
			req := kmsg.NewPtrHeartbeatRequest()
			req.Group = h.group
			req.Generation = info.Epoch
			req.MemberID = h.member
			req.InstanceID = h.instance
			ctx, cancel := context.WithTimeout(context.Background(), keepAliveEvery)
			req.RequestWith(ctx, cl) // best effort: REBALANCE_IN_PROGRESS is the answer
			cancel()
		}
	}
}

// close ends run, if it was started, and waits for it.
func (w *groupWatch) close(started bool) {
	close(w.stop)
	if started {
		<-w.done
	}
}

type trackedListener struct {
	net.Listener
	w *groupWatch
}

func (l *trackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, w: l.w}
	tc.answered = sync.NewCond(&tc.mu)
	return tc, nil
}

// trackedConn is one client connection as kfake sees it. kfake reads a
// request (its size, then its body) on one goroutine and writes the
// response on another, one request at a time per connection: every write
// answers the last request read.
type trackedConn struct {
	net.Conn
	w *groupWatch

	// Request framing, touched by the reading goroutine only.
	plain bool    // the first bytes were a Kafka frame, not TLS
	seen  bool    // some bytes were read
	size  [4]byte // the frame size being read
	nsize int
	left  int    // body bytes still to come
	key   int16  // the body's request key, once known
	body  []byte // the body so far: its key, and all of a JoinGroup or SyncGroup

	mu       sync.Mutex
	answered *sync.Cond
	unanswer bool // a JoinGroup or SyncGroup was read and not answered
	closed   bool
	// Requests read and responses written, and the number of the held
	// request: kfake answers in order, one write a response, but it may
	// read a pipelined request before it answered the one before, so the
	// next write does not always answer the held request.
	reads, writes, heldAt int
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.frame(p[:n])
	if err != nil {
		// The client is gone: tell kfake only once the held request
		// was answered (or kfake closed the connection itself).
		c.mu.Lock()
		for c.unanswer && !c.closed {
			c.answered.Wait()
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *trackedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	c.writes++
	held := c.unanswer && c.writes >= c.heldAt
	c.mu.Unlock()
	if held { // most writes answer a produce or a fetch: nothing to settle
		c.settle(false)
	}
	return n, err
}

func (c *trackedConn) Close() error {
	c.settle(true)
	return c.Conn.Close()
}

// settle marks the last request answered (and the connection closed).
func (c *trackedConn) settle(closed bool) {
	c.mu.Lock()
	c.unanswer = false
	c.closed = c.closed || closed
	c.answered.Broadcast()
	c.mu.Unlock()
	c.w.mu.Lock()
	delete(c.w.held, c)
	c.w.mu.Unlock()
}

// frame follows the request framing over the bytes b just read.
func (c *trackedConn) frame(b []byte) {
	if len(b) > 0 && !c.seen {
		c.seen = true
		// A Kafka frame starts with its size, whose first byte is 0
		// below 16 MiB; a TLS record starts with 0x16. Behind TLS
		// nothing is tracked.
		c.plain = b[0] == 0
	}
	for len(b) > 0 && c.plain {
		if c.nsize < 4 {
			k := copy(c.size[c.nsize:], b)
			c.nsize += k
			b = b[k:]
			if c.nsize == 4 {
				c.left = int(binary.BigEndian.Uint32(c.size[:]))
				c.key, c.body = -1, c.body[:0]
			}
		} else {
			k := min(len(b), c.left)
			chunk := b[:k]
			b, c.left = b[k:], c.left-k
			if c.key < 0 { // the key's 2 bytes first
				head := min(len(chunk), 2-len(c.body))
				c.body = append(c.body, chunk[:head]...)
				chunk = chunk[head:]
				if len(c.body) == 2 {
					c.key = int16(binary.BigEndian.Uint16(c.body))
				}
			}
			if c.key == int16(kmsg.JoinGroup) || c.key == int16(kmsg.SyncGroup) {
				c.body = append(c.body, chunk...)
			}
		}
		if c.nsize == 4 && c.left == 0 {
			c.request()
			c.nsize = 0
		}
	}
}

// request notes a whole request read.
func (c *trackedConn) request() {
	c.mu.Lock()
	c.reads++
	held := c.key == int16(kmsg.JoinGroup) || c.key == int16(kmsg.SyncGroup)
	if held {
		c.unanswer, c.heldAt = true, c.reads
	}
	c.mu.Unlock()
	if !held {
		return
	}
	if c.key != int16(kmsg.JoinGroup) {
		return
	}
	if j, ok := parseJoin(c.body); ok {
		c.w.mu.Lock()
		c.w.held[c] = heldJoin{group: j.Group, member: j.MemberID, instance: j.InstanceID, since: time.Now()}
		c.w.mu.Unlock()
	}
}

// parseJoin decodes a JoinGroup request's body: its header (key, version,
// correlation id, client id, and tags when flexible), then the request.
func parseJoin(body []byte) (*kmsg.JoinGroupRequest, bool) {
	r := kbin.Reader{Src: body}
	r.Int16() // key
	version := r.Int16()
	r.Int32()          // correlation id
	r.NullableString() // client id
	req := kmsg.NewPtrJoinGroupRequest()
	req.SetVersion(version)
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
	}
	if !r.Ok() || req.ReadFrom(r.Src) != nil {
		return nil, false
	}
	return req, true
}
