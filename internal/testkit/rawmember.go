package testkit

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RawMember is a group member made of bare JoinGroup and SyncGroup
// requests, which never heartbeats: a member whose process died, for the
// coordinator, until its session times out.
type RawMember struct {
	Client   *kgo.Client
	Group    string
	memberID string
}

// Join joins the group, waiting for the join to complete (a rebalance), and
// syncs; it returns the join's error code.
func (m *RawMember) Join(ctx context.Context, topics []string, session time.Duration) error {
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = topics
	for {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group = m.Group
		req.MemberID = m.memberID
		req.SessionTimeoutMillis = int32(session.Milliseconds())
		req.RebalanceTimeoutMillis = int32(session.Milliseconds())
		req.ProtocolType = "consumer"
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name = "range"
		p.Metadata = meta.AppendTo(nil)
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(ctx, m.Client)
		if err != nil {
			return err
		}
		m.memberID = resp.MemberID
		if err := kerr.ErrorForCode(resp.ErrorCode); errors.Is(err, kerr.MemberIDRequired) {
			continue // join again, with the id
		} else if err != nil {
			return err
		}
		sync := kmsg.NewPtrSyncGroupRequest()
		sync.Group = m.Group
		sync.MemberID = m.memberID
		sync.Generation = resp.Generation
		_, err = sync.RequestWith(ctx, m.Client)
		return err
	}
}
