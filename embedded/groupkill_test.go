package embedded

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// killable dials a client's connections and can kill them all at once, as
// the kernel does when the client's process is killed: the connections
// close and no new one opens.
type killable struct {
	mu     sync.Mutex
	dead   bool
	conns  []net.Conn
	dialer net.Dialer
}

func (k *killable) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dead {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errKilled}
	}
	c, err := k.dialer.DialContext(ctx, network, addr)
	if err == nil {
		k.conns = append(k.conns, c)
	}
	return c, err
}

var errKilled = &killedError{}

type killedError struct{}

func (*killedError) Error() string { return "connection refused (client killed)" }

func (k *killable) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dead = true
	for _, c := range k.conns {
		c.Close()
	}
}

// TestGroupMembersKilled: a new member whose connections die while
// the coordinator holds its JoinGroup leaves the group within its session
// timeout, and the other member gets every partition back (issue 40).
// Without the cluster's connection tracking (groupconn.go), kfake kept
// such a member until the rebalance timeout, about half the time (the
// answer to the dead connection raced with kfake noticing the close).
// The same for a member killed while it holds partitions. Eight kills,
// one after the other, alternately in a join and while holding
// partitions.
func TestGroupMembersKilled(t *testing.T) {
	t.Parallel()
	const (
		topic, group = "work", "workers"
		session      = 6 * time.Second
		rebalance    = 60 * time.Second
		bound        = session + 20*time.Second // generous, and well below rebalance
		kills        = 8
	)
	c := startT(t, Partitions(4), Topics(topic))
	ctx, cancel := context.WithTimeout(context.Background(), 2*kills*bound)
	defer cancel()
	member := func(opts ...kgo.Opt) *kgo.Client {
		return clientT(t, c, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
			kgo.SessionTimeout(session), kgo.HeartbeatInterval(time.Second),
			kgo.RebalanceTimeout(rebalance)}, opts...)...)
	}
	a := member()
	go func() {
		for ctx.Err() == nil {
			a.PollFetches(ctx)
		}
	}()
	aloneWithAll := func(i *kfake.GroupInfo) bool {
		return i != nil && i.State == "Stable" && len(i.Members) == 1 && i.Members[0].NumAssigned() == 4
	}
	if _, err := c.Kfake().WaitGroupInfo(ctx, group, aloneWithAll); err != nil {
		t.Fatalf("the first member alone: %v", err)
	}
	aID, _ := a.GroupMetadata()

	for kill := range kills {
		// The next JoinGroup that names a member other than a is the
		// new member's second (kgo's first gets MEMBER_ID_REQUIRED):
		// kfake holds it until a rejoined. The new member dies then.
		k := new(killable)
		if kill%2 == 0 {
			joined := make(chan struct{})
			var once sync.Once
			c.Kfake().ControlKey(int16(kmsg.JoinGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
				if j := req.(*kmsg.JoinGroupRequest); j.MemberID != "" && j.MemberID != aID {
					once.Do(func() { k.kill(); close(joined) })
					c.Kfake().DropControl()
				} else {
					c.Kfake().KeepControl()
				}
				return nil, nil, false
			})
			b := member(kgo.Dialer(k.dial))
			defer b.Close()
			go b.PollFetches(ctx)
			select {
			case <-joined:
			case <-ctx.Done():
				t.Fatalf("kill %d: the new member never joined", kill)
			}
		} else {
			// Killed while it holds partitions.
			b := member(kgo.Dialer(k.dial))
			defer b.Close()
			go b.PollFetches(ctx)
			both := func(i *kfake.GroupInfo) bool {
				return i != nil && i.State == "Stable" && len(i.Members) == 2 && i.Members[0].NumAssigned() > 0 && i.Members[1].NumAssigned() > 0
			}
			if _, err := c.Kfake().WaitGroupInfo(ctx, group, both); err != nil {
				t.Fatalf("kill %d: the members never shared the partitions: %v", kill, err)
			}
			k.kill()
		}
		killed := time.Now()
		wctx, wcancel := context.WithTimeout(ctx, bound)
		info, err := c.Kfake().WaitGroupInfo(wctx, group, aloneWithAll)
		wcancel()
		took := time.Since(killed).Round(time.Millisecond)
		if err != nil {
			t.Fatalf("kill %d: the survivor did not hold every partition alone within %v of the kill (session timeout %v, rebalance timeout %v): %+v", kill, bound, session, rebalance, c.Kfake().GroupInfo(group))
		}
		t.Logf("kill %d: the survivor holds every partition alone after %v (generation %d)", kill, took, info.Epoch)
	}
}
