package kafkabpl

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Tests of group-protocol "consumer", KIP-848's protocol, where the broker
// assigns partitions.

// TestGroupProtocolConfig checks the keys of the group protocol: the
// spellings, the broker's assignor as the balancer kgo reads, and the
// classic protocol's keys refused beside "consumer", as Java's client
// refuses them.
func TestGroupProtocolConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg    map[string]any
		server bool
		first  string // the first balancer's protocol name
	}{
		{map[string]any{}, false, "range"},
		{map[string]any{"group-protocol": "classic"}, false, "range"},
		{map[string]any{"group.protocol": "CONSUMER"}, true, "cooperative-sticky"},
		{map[string]any{"group-protocol": "consumer", "group.remote.assignor": "range"}, true, "range"},
		{map[string]any{"group-protocol": "consumer", "group-remote-assignor": "uniform"}, true, "cooperative-sticky"},
	} {
		tt.cfg["servers"] = "h:1"
		c, err := parseConfig(tt.cfg)
		if err != nil {
			t.Fatalf("%v: %v", tt.cfg, err)
		}
		if c.serverAssigns != tt.server || c.balancers[0].ProtocolName() != tt.first {
			t.Errorf("%v: server assigns %v, first balancer %s; want %v, %s", tt.cfg, c.serverAssigns, c.balancers[0].ProtocolName(), tt.server, tt.first)
		}
	}
	for _, tt := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"group-protocol": "next"}, `config "group-protocol": want one of "classic", "consumer", got the string "next"`},
		{map[string]any{"group-protocol": "consumer", "group-remote-assignor": "sticky"}, `config "group-remote-assignor": want one of "range", "uniform", got the string "sticky"`},
		{map[string]any{"group-remote-assignor": "range"}, `config "group-remote-assignor" needs "group-protocol" "consumer"`},
		{map[string]any{"group-protocol": "consumer", "partition.assignment.strategy": "range"}, `config "assignment-strategy" is not read under "group-protocol" "consumer"`},
		{map[string]any{"group-protocol": "consumer", "session.timeout.ms": 10000}, `config "session-timeout" is not read under "group-protocol" "consumer"`},
		{map[string]any{"group-protocol": "consumer", "heartbeat-interval": 1000}, `config "heartbeat-interval" is not read under`},
	} {
		tt.cfg["servers"] = "h:1"
		_, err := parseConfig(tt.cfg)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want InvalidConfig containing %q", tt.cfg, err, tt.want)
		}
	}
}

// TestConsumerProtocolSharesWork runs TestGroupSharesWork's consumers under
// group-protocol "consumer", and checks with the broker that the group is
// one of KIP-848's, not a classic group that kgo fell back to.
func TestConsumerProtocolSharesWork(t *testing.T) {
	t.Parallel()
	for _, assignor := range []string{"uniform", "range"} {
		t.Run(assignor, func(t *testing.T) {
			t.Parallel()
			cluster := newCluster(t, embedded.Partitions(4), embedded.Topics("work"))
			lib := shareWork(t, cluster.Servers(), map[string]any{"group-protocol": "consumer", "group-remote-assignor": assignor})
			checkDescribed(t, lib, cluster.Servers())
			cl := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(cluster.Addrs()...)))
			defer cl.Close()
			described := must[kadm.DescribedConsumerGroups](t)(kadm.NewClient(cl).DescribeConsumerGroups(context.Background(), "workers"))
			g := described["workers"]
			if g.Err != nil || len(g.Members) != 2 || g.AssignorName != assignor {
				t.Errorf("the broker's view of the group: err %v, %d members, assignor %q; want a consumer group of 2 members, assignor %q", g.Err, len(g.Members), g.AssignorName, assignor)
			}
		})
	}
}

// checkDescribed checks what DescribeGroup says of shareWork's group of
// KIP-848's protocol, which the classic DescribeGroups shows with no
// members: both members, the 4 partitions assigned, and a lag for each.
func checkDescribed(t *testing.T, lib *Library, servers string) {
	t.Helper()
	a := must[string](t)(lib.Create(testCtx(t), Admin, servers))
	g := must[*GroupInfo](t)(lib.DescribeGroup(testCtx(t), a, "workers"))
	var assigned []int32
	for _, m := range g.Members {
		for _, tp := range m.Assignment {
			assigned = append(assigned, tp.Partitions...)
		}
	}
	slices.Sort(assigned)
	if g.State != "Stable" || len(g.Members) != 2 || !slices.Equal(assigned, []int32{0, 1, 2, 3}) || len(g.Lag) != 1 || len(g.Lag[0].Partitions) != 4 {
		t.Fatalf("described %s", value.Format(g.List()))
	}
	for _, pl := range g.Lag[0].Partitions {
		if pl.Err != nil || pl.Lag < 0 || pl.End < 0 {
			t.Errorf("lag %+v", pl)
		}
	}
}
