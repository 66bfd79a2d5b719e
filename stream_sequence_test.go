package kafkabpl

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStreamOutOfOrderSequence: a broker that refuses an exactly-once
// stream's write with OUT_OF_ORDER_SEQUENCE_NUMBER (seen, rarely, from
// kfake under the race detector, and from Kafka brokers after some
// failures) aborts the batch's transaction; the stream re-initializes its
// producer, which resets its sequences under a new epoch, and goes on from
// the committed offsets, every input's output once.
func TestStreamOutOfOrderSequence(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	servers := c.Servers()
	lib := streamLib(t)
	sendValues(t, lib, servers, "seq-in", Message{Value: "a"}, Message{Value: "b"}, Message{Value: "c"})
	refused := refuseTransactionalProduce(c.Kfake(), kerr.OutOfOrderSequenceNumber)
	upper := func(_ context.Context, r *Record) ([]StreamOutput, error) {
		return []StreamOutput{{Message: Message{Value: strings.ToUpper(r.Value().(string))}}}, nil
	}
	id := must[string](t)(lib.Stream(testCtx(t), map[string]any{"servers": servers, "group": "seq"},
		StreamSpec{From: []string{"seq-in"}, To: "seq-out", Transform: upper}))
	st := waitStream(t, lib, id, func(st *StreamStatus) bool { return st.Processed == 3 || st.State != StreamRunning })
	if st.State != StreamRunning || st.Reinits != 1 || refused.Load() != 1 {
		t.Fatalf("status %+v after %d refused writes: want running, its producer re-initialized once", st, refused.Load())
	}
	if out := values(readAll(t, lib, servers, 3, "seq-out")); out != "A B C" {
		t.Errorf("read_committed seq-out: %s, want A B C, each once", out)
	}
	if ok, err := lib.Destroy(testCtx(t), id); !ok || err != nil {
		t.Errorf("destroy: %v %v", ok, err)
	}
}

// refuseTransactionalProduce makes c answer the first produce request
// of a transactional producer with code for every partition it writes; it
// counts the requests it refused (one at most).
func refuseTransactionalProduce(c *kfake.Cluster, code *kerr.Error) *atomic.Int32 {
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.ProduceRequest)
		if req.TransactionID == nil {
			c.KeepControl()
			c.DropControl()
			return nil, nil, false
		}
		refused.Add(1)
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
	return &refused
}
