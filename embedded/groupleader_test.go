package embedded

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawMember is a classic group member that speaks JoinGroup, SyncGroup and
// LeaveGroup itself, on a client of its own (a held JoinGroup blocks the
// connection it was sent on).
type rawMember struct {
	cl *kgo.Client
	id string
}

// join sends JoinGroup (again with the member id the coordinator asks
// for, the first time) and returns the answer.
func (m *rawMember) join(ctx context.Context, group string) (*kmsg.JoinGroupResponse, error) {
	for {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group = group
		req.MemberID = m.id
		req.SessionTimeoutMillis = 30000
		req.RebalanceTimeoutMillis = 60000
		req.ProtocolType = "consumer"
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name = "range"
		meta := kmsg.NewConsumerMemberMetadata()
		meta.Topics = []string{"t"}
		p.Metadata = meta.AppendTo(nil)
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(ctx, m.cl)
		if err != nil {
			return nil, err
		}
		if m.id == "" && resp.ErrorCode == kerr.MemberIDRequired.Code {
			m.id = resp.MemberID
			continue
		}
		return resp, kerr.ErrorForCode(resp.ErrorCode)
	}
}

// TestGroupOneNewLeader: when a classic group's leader is gone, the
// rebalance that follows names one new leader, and tells every member the
// same one (issue 47). kfake chose the leader inside the loop that answers
// the joins, so that each member was told it led, and the last one really
// did. Here the leader leaves while two new members wait in JoinGroup.
func TestGroupOneNewLeader(t *testing.T) {
	t.Parallel()
	c := startT(t)
	ctx := ctxT(t)
	const group = "one-leader"
	x := &rawMember{cl: clientT(t, c)}
	resp, err := x.join(ctx, group)
	if err != nil || resp.LeaderID != x.id {
		t.Fatalf("the first member's join: %v, leader %q, want itself %q", err, resp.LeaderID, x.id)
	}
	sreq := kmsg.NewPtrSyncGroupRequest()
	sreq.Group, sreq.MemberID, sreq.Generation = group, x.id, resp.Generation
	sreq.ProtocolType, sreq.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	if sresp, err := sreq.RequestWith(ctx, x.cl); err != nil || sresp.ErrorCode != 0 {
		t.Fatalf("the first member's sync: %v %v", err, sresp)
	}

	// Two new members join; the coordinator holds them until x
	// rejoins, which it never does: it leaves.
	ys := []*rawMember{{cl: clientT(t, c)}, {cl: clientT(t, c)}}
	answers := make([]*kmsg.JoinGroupResponse, len(ys))
	errs := make([]error, len(ys))
	var wg sync.WaitGroup
	for i, y := range ys {
		wg.Go(func() { answers[i], errs[i] = y.join(ctx, group) })
	}
	held := func(i *kfake.GroupInfo) bool {
		return i != nil && i.State == "PreparingRebalance" && len(i.Members) == 3
	}
	if _, err := c.Kfake().WaitGroupInfo(ctx, group, held); err != nil {
		t.Fatalf("the new members never joined: %v (%+v)", err, c.Kfake().GroupInfo(group))
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group = group
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = x.id
	leave.Members = append(leave.Members, lm)
	if lresp, err := leave.RequestWith(ctx, x.cl); err != nil || lresp.ErrorCode != 0 {
		t.Fatalf("leave: %v %v", err, lresp)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("the new members' joins: %v", err)
	}
	leader := answers[0].LeaderID
	if leader != ys[0].id && leader != ys[1].id {
		t.Fatalf("the new leader is %q, neither new member (%q, %q)", leader, ys[0].id, ys[1].id)
	}
	for i, a := range answers {
		if a.LeaderID != leader {
			t.Errorf("member %q was told %q leads, member %q was told %q: one leader, told to all", ys[i].id, a.LeaderID, ys[0].id, leader)
		}
		if got := len(a.Members) > 0; got != (ys[i].id == leader) {
			t.Errorf("member %q (leader %q) was given the members' list: %v; only the leader is", ys[i].id, leader, got)
		}
	}
}

// TestGroupLeaderKilled: a classic group whose leader is killed in a
// rebalance settles on the survivor within the leader's session timeout,
// not the rebalance timeout (issue 47). The survivor has the shorter
// session timeout, so that without the fix its session ran out first
// while it waited in SyncGroup for the dead leader's assignment: kfake
// dropped it then and never answered its SyncGroup, and it waited out
// the rebalance timeout. Kafka keeps a member that waits in SyncGroup
// alive.
//   - in a join: the leader dies while the coordinator holds its
//     JoinGroup (its answer goes into the dead connection);
//   - while SyncGroup is held: the leader dies as its SyncGroup is on its
//     way, which the coordinator never reads, while it holds the
//     survivor's.
func TestGroupLeaderKilled(t *testing.T) {
	t.Parallel()
	for _, inSync := range []bool{false, true} {
		name := "in a join"
		if inSync {
			name = "while SyncGroup is held"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testGroupLeaderKilled(t, inSync)
		})
	}
}

func testGroupLeaderKilled(t *testing.T, inSync bool) {
	const (
		topic, group                   = "work", "workers"
		leaderSession, survivorSession = 12 * time.Second, 6 * time.Second
		rebalance                      = 60 * time.Second
		bound                          = leaderSession + 20*time.Second // well below rebalance
		heartbeat                      = time.Second
	)
	c := startT(t, Partitions(4), Topics(topic))
	ctx, cancel := context.WithTimeout(context.Background(), 2*bound)
	defer cancel()
	member := func(session time.Duration, opts ...kgo.Opt) *kgo.Client {
		return clientT(t, c, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
			kgo.SessionTimeout(session), kgo.HeartbeatInterval(heartbeat),
			kgo.RebalanceTimeout(rebalance)}, opts...)...)
	}
	poll := func(cl *kgo.Client) {
		go func() {
			for ctx.Err() == nil {
				cl.PollFetches(ctx)
			}
		}()
	}
	alone := func(leader bool, lid string) func(*kfake.GroupInfo) bool {
		return func(i *kfake.GroupInfo) bool {
			return i != nil && i.State == "Stable" && len(i.Members) == 1 && (i.Members[0].MemberID == lid) == leader && i.Members[0].NumAssigned() == 4
		}
	}

	k := new(killable)
	leader := member(leaderSession, kgo.Dialer(k.dial))
	poll(leader)
	lid := waitMemberID(t, ctx, leader)
	if _, err := c.Kfake().WaitGroupInfo(ctx, group, alone(true, lid)); err != nil {
		t.Fatalf("the leader alone: %v", err)
	}
	killed := make(chan struct{})
	var once sync.Once
	kill := func() { once.Do(func() { k.kill(); close(killed) }) }
	if inSync {
		c.Kfake().ControlKey(int16(kmsg.SyncGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
			if req.(*kmsg.SyncGroupRequest).MemberID != lid {
				c.Kfake().KeepControl()
				return nil, nil, false
			}
			kill()
			return nil, nil, true // never read: the leader died sending it
		})
	} else {
		c.Kfake().ControlKey(int16(kmsg.JoinGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
			if req.(*kmsg.JoinGroupRequest).MemberID != lid {
				c.Kfake().KeepControl()
				return nil, nil, false
			}
			kill()
			c.Kfake().DropControl()
			return nil, nil, false // held and answered: the survivor joined first
		})
	}
	survivor := member(survivorSession)
	poll(survivor)
	select {
	case <-killed:
	case <-ctx.Done():
		t.Fatalf("the leader was never killed: %+v", c.Kfake().GroupInfo(group))
	}
	at := time.Now()
	wctx, wcancel := context.WithTimeout(ctx, bound)
	defer wcancel()
	if _, err := c.Kfake().WaitGroupInfo(wctx, group, alone(false, lid)); err != nil {
		t.Fatalf("the survivor did not hold every partition alone within %v of the kill (leader's session %v, survivor's %v, rebalance timeout %v): %+v",
			bound, leaderSession, survivorSession, rebalance, c.Kfake().GroupInfo(group))
	}
	t.Logf("the survivor holds every partition alone %v after the kill", time.Since(at).Round(time.Millisecond))
}

// waitMemberID returns the member id the group gave cl, waiting for it.
func waitMemberID(t *testing.T, ctx context.Context, cl *kgo.Client) string {
	t.Helper()
	for {
		if id, _ := cl.GroupMetadata(); id != "" {
			return id
		}
		select {
		case <-ctx.Done():
			t.Fatal("the member was never given an id")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
