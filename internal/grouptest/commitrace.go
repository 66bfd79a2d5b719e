// Package grouptest holds consumer group scenarios that the module's tests
// run twice: on the embedded cluster (package kafkabpl's tests) and on a
// real Kafka broker (cmd/kafkabpl's TestRealKafka). Only tests import it.
package grouptest

import (
	"context"
	"encoding/binary"
	"math"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CommitRace is a dialer (for kafkabpl.Library.SetDialer) that, once
// armed, makes a KIP-848 member's commit be in flight while the member
// learns that the group revokes partitions, as happens when a commit and
// a heartbeat cross: kgo sends both on the coordinator's one connection.
// It holds the first heartbeat answer that assigns the member fewer
// partitions than it held when armed (the revocation) until the member
// writes an OffsetCommit, then lets the answer through and holds the
// commit's answer until the member writes its next heartbeat (kgo
// acknowledges the revocation once the member's revoke callback
// returned), or for slow at most: a slow answer, which is what a revoke
// callback that waits for the commit sees (kgo sends no heartbeat while
// it runs). Every hold also ends when the connection closes or the test
// ends.
type CommitRace struct {
	dialer net.Dialer
	slow   time.Duration
	done   chan struct{} // closed when the test ends

	mu          sync.Mutex
	state       raceState
	holding     int // partitions the member held when armed
	commitCorr  int32
	revocation  chan struct{} // closed once a revocation's answer is held
	commitSent  chan struct{} // closed once the commit is written
	heartbeatOn chan struct{} // closed once a heartbeat follows the commit
}

type raceState int

const (
	raceIdle          raceState = iota
	raceArmed                   // waiting for a heartbeat answer that takes partitions away
	raceHoldingBeat             // holding it, waiting for an OffsetCommit
	raceHoldingCommit           // holding the commit's answer, waiting for a heartbeat
	raceDone
)

// NewCommitRace returns a CommitRace, not armed, whose holds end with the
// test, and that holds a commit's answer for slow at most.
func NewCommitRace(t testing.TB, slow time.Duration) *CommitRace {
	r := &CommitRace{
		slow:        slow,
		done:        make(chan struct{}),
		revocation:  make(chan struct{}),
		commitSent:  make(chan struct{}),
		heartbeatOn: make(chan struct{}),
	}
	t.Cleanup(func() { close(r.done) })
	return r
}

// Arm starts looking for the revocation: a heartbeat answer that assigns
// fewer than holding partitions, the number the member holds now.
func (r *CommitRace) Arm(holding int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == raceIdle {
		r.state, r.holding = raceArmed, holding
	}
}

// Revocation is closed once the member's revocation is held: commit then.
func (r *CommitRace) Revocation() <-chan struct{} { return r.revocation }

// Happened reports whether the race was run: the commit was written
// while the revocation was held, and its answer was held.
func (r *CommitRace) Happened() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state >= raceHoldingCommit
}

// Dial dials addr and follows the connection's requests and answers.
func (r *CommitRace) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := r.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &raceConn{Conn: c, r: r, reqs: map[int32]request{}, closed: make(chan struct{})}, nil
}

// request is what an answer's correlation id stands for.
type request struct{ key, version int16 }

type raceConn struct {
	net.Conn
	r *CommitRace

	wmu  sync.Mutex
	wbuf []byte // the part of a request frame written so far
	rmu  sync.Mutex
	reqs map[int32]request // written, by correlation id; under rmu

	rbuf []byte // read from the connection, not yet framed (the reader's own)
	out  []byte // framed and let through, not yet returned

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *raceConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func (c *raceConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	c.wbuf = append(c.wbuf, p...)
	for len(c.wbuf) >= 12 {
		size := int(binary.BigEndian.Uint32(c.wbuf))
		if len(c.wbuf) < 4+size {
			break
		}
		key := int16(binary.BigEndian.Uint16(c.wbuf[4:]))
		version := int16(binary.BigEndian.Uint16(c.wbuf[6:]))
		corr := int32(binary.BigEndian.Uint32(c.wbuf[8:]))
		c.wbuf = c.wbuf[4+size:]
		c.rmu.Lock()
		c.reqs[corr] = request{key, version}
		c.rmu.Unlock()
		c.r.wrote(key, corr)
	}
	c.wmu.Unlock()
	return c.Conn.Write(p)
}

// wrote moves the race on as the member writes a request.
func (r *CommitRace) wrote(key int16, corr int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.state == raceHoldingBeat && key == int16(kmsg.OffsetCommit):
		r.state, r.commitCorr = raceHoldingCommit, corr
		close(r.commitSent)
	case r.state == raceHoldingCommit && key == int16(kmsg.ConsumerGroupHeartbeat):
		r.state = raceDone
		close(r.heartbeatOn)
	}
}

func (c *raceConn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if len(c.rbuf) >= 8 {
			if size := int(binary.BigEndian.Uint32(c.rbuf)); len(c.rbuf) >= 4+size {
				frame := c.rbuf[:4+size]
				c.hold(frame)
				c.out = append(c.out, frame...)
				c.rbuf = c.rbuf[4+size:]
				continue
			}
		}
		buf := make([]byte, 64<<10)
		n, err := c.Conn.Read(buf)
		c.rbuf = append(c.rbuf, buf[:n]...)
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// hold returns once the answer frame may go to the member.
func (c *raceConn) hold(frame []byte) {
	corr := int32(binary.BigEndian.Uint32(frame[4:]))
	c.rmu.Lock()
	req := c.reqs[corr]
	delete(c.reqs, corr)
	c.rmu.Unlock()
	r := c.r
	r.mu.Lock()
	var wait chan struct{}
	var most <-chan time.Time
	switch {
	case r.state == raceArmed && req.key == int16(kmsg.ConsumerGroupHeartbeat) && assigned(req.version, frame[8:]) < r.holding:
		r.state = raceHoldingBeat
		close(r.revocation)
		wait = r.commitSent
	case r.state >= raceHoldingCommit && req.key == int16(kmsg.OffsetCommit) && corr == r.commitCorr:
		wait = r.heartbeatOn
		most = time.After(r.slow)
	}
	r.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-most:
		case <-c.closed:
		case <-r.done:
		}
	}
}

// assigned returns how many partitions a ConsumerGroupHeartbeat answer
// (its header's tags, then its body) assigns the member, or MaxInt when
// it carries no assignment (nothing changed) or an error.
func assigned(version int16, b []byte) int {
	rd := kbin.Reader{Src: b}
	kmsg.SkipTags(&rd) // the flexible response header
	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	resp.SetVersion(version)
	if !rd.Ok() || resp.ReadFrom(rd.Src) != nil || resp.ErrorCode != 0 || resp.Assignment == nil {
		return math.MaxInt
	}
	n := 0
	for _, t := range resp.Assignment.Topics {
		n += len(t.Partitions)
	}
	return n
}
