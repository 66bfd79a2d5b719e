package stream

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Who holds a stateful stream's partitions: each process of the group
// advertises its query endpoint in its group membership, and a query for
// a key of a partition held elsewhere finds the owner in the group's
// description.
//
// The endpoint travels in the member metadata's UserData, the one field
// of the classic consumer protocol that a client fills as it likes: a
// wrapper of the group's balancer (endpointBalancer) puts an envelope,
// the endpoint then the inner balancer's own UserData, in what the member
// sends when it joins, and takes it off again before the group leader's
// balancer reads the members (cooperative-sticky keeps its previous
// assignment there). DescribeGroups gives every member's metadata and
// assignment, so any process can read who holds what. KIP-848's
// "group-protocol" "consumer" has no such field: a stream under it
// advertises nothing (a "query-endpoint" given there is refused).

// envelopeMagic starts the UserData of a member that advertises an
// endpoint; a UserData without it (another client's) is left alone.
const envelopeMagic = "kbq\x01"

// wrapEndpoint returns inner wrapped in an envelope carrying endpoint.
func wrapEndpoint(endpoint string, inner []byte) []byte {
	b := make([]byte, 0, len(envelopeMagic)+binary.MaxVarintLen64+len(endpoint)+len(inner))
	b = append(b, envelopeMagic...)
	b = binary.AppendUvarint(b, uint64(len(endpoint)))
	b = append(b, endpoint...)
	return append(b, inner...)
}

// unwrapEndpoint reads an envelope: the endpoint and the inner UserData;
// ok is false for a UserData without one, returned whole as inner.
func unwrapEndpoint(b []byte) (endpoint string, inner []byte, ok bool) {
	rest, found := bytes.CutPrefix(b, []byte(envelopeMagic))
	if !found {
		return "", b, false
	}
	n, size := binary.Uvarint(rest)
	if size <= 0 || n > uint64(len(rest)-size) {
		return "", b, false
	}
	rest = rest[size:]
	return string(rest[:n]), rest[n:], true
}

// endpointBalancer is a group balancer that advertises endpoint in the
// member's metadata and otherwise balances as its inner balancer does.
type endpointBalancer struct {
	kgo.GroupBalancer
	endpoint string
}

// JoinGroupMetadata is the inner balancer's metadata with the endpoint's
// envelope around its UserData.
func (b *endpointBalancer) JoinGroupMetadata(interests []string, current map[string][]int32, generation int32) []byte {
	raw := b.GroupBalancer.JoinGroupMetadata(interests, current, generation)
	var m kmsg.ConsumerMemberMetadata
	if err := m.ReadFrom(raw); err != nil {
		return raw // not the consumer protocol's: sent as it is
	}
	m.UserData = wrapEndpoint(b.endpoint, m.UserData)
	return m.AppendTo(nil)
}

// MemberBalancer hands the inner balancer the members' metadata without
// the envelopes.
func (b *endpointBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	bare := slices.Clone(members)
	for i := range bare {
		var m kmsg.ConsumerMemberMetadata
		if m.ReadFrom(bare[i].ProtocolMetadata) != nil {
			continue
		}
		if _, inner, ok := unwrapEndpoint(m.UserData); ok {
			m.UserData = inner
			bare[i].ProtocolMetadata = m.AppendTo(nil)
		}
	}
	return b.GroupBalancer.MemberBalancer(bare)
}

// advertise returns the balancers of a stateful stream that advertises
// cfg's query endpoint: bals (nil: the config's), each wrapped. Without
// an endpoint, or under the consumer group protocol, it returns bals.
func advertise(cfg *kafkabpl.ClientConfig, bals []kgo.GroupBalancer) []kgo.GroupBalancer {
	if cfg.QueryEndpoint() == "" || cfg.ServerAssigns() {
		return bals
	}
	if bals == nil {
		bals = cfg.Balancers()
	}
	out := make([]kgo.GroupBalancer, len(bals))
	for i, b := range bals {
		out[i] = &endpointBalancer{GroupBalancer: b, endpoint: cfg.QueryEndpoint()}
	}
	return out
}

// owner is the member of the group that holds a partition.
type owner struct {
	member, client, host string
	endpoint             string // "": it advertises none
}

// owners caches who holds a stream's partitions, as the group's
// description last said; a rebalance seen here (an assignment), or a
// miss (an owner that no longer holds the partition, or is itself),
// refreshes it.
type owners struct {
	mu     sync.Mutex
	n      int              // the store's partition count; 0: not known yet
	gen    uint64           // the store's assignment generation the owners were read at
	byPart map[int32]*owner // nil: not read
	peers  []string         // the other members' endpoints, as byPart was read
	read   time.Time        // when byPart was read
}

// partitionCount returns the store's partition count: its input's (the
// repartition topic's for a re-keying stream), read once.
func (s *stream) partitionCount(ctx context.Context) (int, error) {
	o := &s.owners
	o.mu.Lock()
	n := o.n
	o.mu.Unlock()
	if n > 0 {
		return n, nil
	}
	st := s.store
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout())
	defer cancel()
	topics, err := topicPartitions(ctx, s.h.Client(), st.inputs[0])
	if err != nil {
		return 0, kafkabpl.Wrapf(kafkabpl.ErrNotReady, err, "store %q: the partition count of %q", st.name, st.inputs[0])
	}
	t, ok := topics[st.inputs[0]]
	if !ok || t.err != nil || t.n == 0 {
		return 0, kafkabpl.Errorf(kafkabpl.ErrNotReady, "store %q: its input %q is not there yet", st.name, st.inputs[0])
	}
	o.mu.Lock()
	o.n = t.n
	o.mu.Unlock()
	return t.n, nil
}

// owner returns who holds partition p of the store, from the cached
// description unless refresh is set or the group rebalanced since.
func (s *stream) owner(ctx context.Context, p int32, refresh bool) (*owner, error) {
	st := s.store
	st.mu.Lock()
	gen := st.gen
	st.mu.Unlock()
	o := &s.owners
	o.mu.Lock()
	if !refresh && o.byPart != nil && o.gen == gen {
		w := o.byPart[p]
		o.mu.Unlock()
		if w == nil {
			return nil, s.noOwner(p)
		}
		return w, nil
	}
	o.mu.Unlock()
	byPart, err := s.readOwners(ctx, gen)
	if err != nil {
		return nil, err
	}
	if w := byPart[p]; w != nil {
		return w, nil
	}
	return nil, s.noOwner(p)
}

// readOwners reads the group's description and caches it as read at
// the store's assignment generation gen.
func (s *stream) readOwners(ctx context.Context, gen uint64) (map[int32]*owner, error) {
	byPart, peers, err := s.describeOwners(ctx)
	if err != nil {
		return nil, err
	}
	o := &s.owners
	o.mu.Lock()
	o.byPart, o.gen, o.peers, o.read = byPart, gen, peers, time.Now()
	o.mu.Unlock()
	return byPart, nil
}

// peersFresh is how long the cached description answers peers.
const peersFresh = 5 * time.Second

// peers returns the query endpoints the group's other members advertise,
// from the cached description when it was read at the current assignment
// within peersFresh, else from the group's; a stream that advertises no
// endpoint has none. When the group cannot be described (it is
// rebalancing, say), the cached ones come with the error.
func (s *stream) peers(ctx context.Context) ([]string, error) {
	st := s.store
	if st == nil || s.cfg.QueryEndpoint() == "" || s.cfg.ServerAssigns() {
		return nil, nil
	}
	st.mu.Lock()
	gen := st.gen
	st.mu.Unlock()
	o := &s.owners
	o.mu.Lock()
	peers, fresh := o.peers, o.byPart != nil && o.gen == gen && time.Since(o.read) < peersFresh
	o.mu.Unlock()
	if fresh {
		return peers, nil
	}
	if _, err := s.readOwners(ctx, gen); err != nil {
		return peers, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.peers, nil
}

// forgetOwners drops the cached description, so that the next query
// reads the group's again: after an owner that did not answer, which the
// group may move its partitions away from at any time.
func (s *stream) forgetOwners() {
	s.owners.mu.Lock()
	s.owners.byPart = nil
	s.owners.mu.Unlock()
}

// noOwner is the error of a partition the group assigns to no member.
func (s *stream) noOwner(p int32) error {
	return kafkabpl.Errorf(kafkabpl.ErrNotReady, "store %q partition %d: no member of group %q holds it now (a rebalance is under way, or the group has no members)", s.store.name, p, s.cfg.Group())
}

// describeOwners reads who holds each of the store's partitions from the
// group's description, and the endpoints the other members advertise. A
// group that is rebalancing gives ErrNotReady.
func (s *stream) describeOwners(ctx context.Context) (map[int32]*owner, []string, error) {
	st := s.store
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout())
	defer cancel()
	group := s.cfg.Group()
	described, err := kadm.NewClient(s.h.Client()).DescribeGroups(ctx, group)
	if err == nil {
		err = described.Error()
	}
	if err != nil {
		// The cause is the client's or the brokers' own error (kerr's
		// code reachable), with no BPL type of its own: NotReady.
		return nil, nil, kafkabpl.Wrapf(kafkabpl.ErrNotReady, err, "store %q: describe group %q (to find who holds the key)", st.name, group)
	}
	g := described[group]
	if g.State != "Stable" {
		return nil, nil, kafkabpl.Errorf(kafkabpl.ErrNotReady, "store %q: group %q is %s, not Stable: its members and their partitions are being settled", st.name, group, g.State)
	}
	byPart := map[int32]*owner{}
	var peers []string
	self, _ := s.h.Client().GroupMetadata()
	for _, m := range g.Members {
		w := &owner{member: m.MemberID, client: m.ClientID, host: m.ClientHost}
		if meta, ok := m.Join.AsConsumer(); ok {
			w.endpoint, _, _ = unwrapEndpoint(meta.UserData)
		}
		if w.endpoint != "" && m.MemberID != self && w.endpoint != s.cfg.QueryEndpoint() && !slices.Contains(peers, w.endpoint) {
			peers = append(peers, w.endpoint)
		}
		a, ok := m.Assigned.AsConsumer()
		if !ok {
			continue
		}
		for _, t := range a.Topics {
			if t.Topic != st.inputs[0] {
				continue
			}
			for _, p := range t.Partitions {
				byPart[p] = w
			}
		}
	}
	slices.Sort(peers)
	return byPart, peers, nil
}

// String names the owner for errors.
func (w *owner) String() string {
	if w.endpoint == "" {
		return fmt.Sprintf("member %s (client %q on %s, no query endpoint)", w.member, w.client, w.host)
	}
	return fmt.Sprintf("member %s at %s", w.member, w.endpoint)
}
