package stream

import (
	"context"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/twmb/franz-go/pkg/kerr"
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
	sendValues(t, lib, servers, "seq-in", kafkabpl.Message{Value: "a"}, kafkabpl.Message{Value: "b"}, kafkabpl.Message{Value: "c"})
	// The first transactional write is refused; the next, after the
	// producer's re-initialization, goes through and drops the control.
	seen := testkit.RefuseProduce(c.Kfake(), 1, kerr.OutOfOrderSequenceNumber, func(r *kmsg.ProduceRequest) bool { return r.TransactionID != nil })
	upper := func(_ context.Context, r *kafkabpl.Record) ([]Output, error) {
		return []Output{{Message: kafkabpl.Message{Value: strings.ToUpper(r.Value().(string))}}}, nil
	}
	id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "seq"},
		Spec{From: []string{"seq-in"}, To: "seq-out", Transform: upper}))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 || st.State != Running })
	if st.State != Running || st.Reinits != 1 || seen.Load() != 2 {
		t.Fatalf("status %+v after %d transactional writes (the first refused): want running, its producer re-initialized once, then one write", st, seen.Load())
	}
	if out := values(readAll(t, lib, servers, 3, "seq-out")); out != "A B C" {
		t.Errorf("read_committed seq-out: %s, want A B C, each once", out)
	}
	if ok, err := lib.Destroy(testCtx(t), id); !ok || err != nil {
		t.Errorf("destroy: %v %v", ok, err)
	}
}
