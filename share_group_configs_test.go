package kafkabpl

import (
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestShareGroupLockDuration checks that a share group's own
// share.record.lock.duration.ms, set with AlterConfigs as an operator
// would, is the lock its records get, not the broker's default (30 s
// here): a polled record's acquisition deadline is at most the group's 2
// s away, and once it passed unacknowledged, another member gets the
// record, delivered again (within pollShare's 20 s). The embedded cluster
// stored and described the group's setting and gave every lock the
// broker's 30 s (issue 47).
func TestShareGroupLockDuration(t *testing.T) {
	t.Parallel()
	const topic, group, lock = "timed-jobs", "timed", 2 * time.Second
	lib, servers, _ := shareGroupSet(t, topic, group, "share.record.lock.duration.ms", "2000",
		embedded.KfakeOptions(kfake.BrokerConfigs(map[string]string{"share.record.lock.sweep.interval.ms": "100"})))
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))
	rec := pollShare(t, lib, a, 1)[0]
	if left := time.Until(rec.AcquisitionDeadline()); left > lock {
		t.Errorf("the record's lock ends %v from now, want at most the group's %v", left.Round(time.Millisecond), lock)
	}
	// a never acknowledges it: b gets it once a's lock ended (a's
	// client, fetching on, may have taken it again meanwhile, for
	// another lock of 2 s: a later delivery).
	b := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))
	again := pollShare(t, lib, b, 1)[0]
	if again.Value() != "job" || again.DeliveryCount() < 2 {
		t.Errorf("the other member polled %v, delivery count %d, want job delivered again", again.Value(), again.DeliveryCount())
	}
}

// TestShareGroupDeliveryLimit checks that a share group's own
// share.delivery.count.limit, set as an operator would, is the limit its
// records get, not the broker's default (5): with the group's 2, a record
// released twice is archived, never delivered a third time, and the
// record after it comes alone. The embedded cluster described the group's
// setting back and delivered the record again.
func TestShareGroupDeliveryLimit(t *testing.T) {
	t.Parallel()
	const topic, group = "retried-jobs", "retrying"
	lib, servers, p := shareGroupSet(t, topic, group, "share.delivery.count.limit", "2")
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))
	for delivery := 1; delivery <= 2; delivery++ {
		rec := pollShare(t, lib, c, 1)[0]
		if rec.Value() != "job" || rec.DeliveryCount() != delivery {
			t.Fatalf("polled %v, delivery %d; want job, delivery %d", rec.Value(), rec.DeliveryCount(), delivery)
		}
		if err := lib.Ack(c, AckRelease, rec.ID()); err != nil {
			t.Fatal(err)
		}
	}
	send(t, lib, p, []string{topic}, unkeyed("next")...)
	if got := pollShare(t, lib, c, 1)[0]; got.Value() != "next" {
		t.Errorf("after two releases with a delivery count limit of 2, polled %v (delivery %d), want next alone", got.Value(), got.DeliveryCount())
	}
}

// shareGroupSet starts a cluster with topic, sets share group group's
// config key to v, as an operator would, and sends one record, "job", to
// topic with the producer it returns, with its Library and the servers.
func shareGroupSet(t *testing.T, topic, group, key, v string, opts ...embedded.Option) (lib *Library, servers, producer string) {
	t.Helper()
	servers = newCluster(t, append([]embedded.Option{embedded.Topics(topic)}, opts...)...).Servers()
	lib = newLib(t)
	ctx := testCtx(t)
	if err := lib.AlterConfigs(ctx, servers, GroupConfigs(group), map[string]string{key: v}, nil); err != nil {
		t.Fatal(err)
	}
	producer = must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, producer, []string{topic}, unkeyed("job")...)
	return lib, servers, producer
}
