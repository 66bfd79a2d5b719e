package testkit

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncBuffer is a bytes.Buffer that the library's goroutines may write to
// (a Library's log output, say) while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// RefuseProduce makes c answer the first n produce requests that match
// accepts (nil: every one; n -1: every one for ever) with code for every
// partition, as a Kafka broker answers UNKNOWN_TOPIC_OR_PARTITION for a
// topic it lists but does not host yet; the others are handled as usual
// and not counted. It returns how many requests it has seen.
func RefuseProduce(c *kfake.Cluster, n int32, code *kerr.Error, match func(*kmsg.ProduceRequest) bool) *atomic.Int32 {
	var seen atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ProduceRequest)
		if match != nil && !match(req) {
			return nil, nil, false
		}
		if seen.Add(1) > n && n >= 0 {
			c.DropControl()
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, code.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return &seen
}
