package kafkabpl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestStreamChangelogNotAutoCreated runs a stateful stream on a cluster
// that creates topics on first use with 1 partition, as Kafka's defaults
// do, over an input of 3 partitions: the changelog must be created by the
// stream, with the input's 3, not by the broker on the stream's first
// look at it (a metadata request through the client's cache asks for
// that when the config allows auto-creation, its default), after which
// the stream failed with the partition counts not matching.
func TestStreamChangelogNotAutoCreated(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	cl, err := kgo.NewClient(kgo.SeedBrokers(servers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(testCtx(t), 3, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}
	lib := streamLib(t)
	sendValues(t, lib, servers, "in", keyed("a", "b", "a")...)
	id := must[string](t)(lib.Stream(testCtx(t), map[string]any{"servers": servers, "group": "g"},
		StreamSpec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "counts"}))
	st := waitStream(t, lib, id, func(st *StreamStatus) bool { return st.Processed == 3 || st.State != StreamRunning })
	if st.State != StreamRunning || st.Store == nil || st.Store.Partitions != 3 {
		t.Fatalf("status %+v, store %+v: want running, holding 3 partitions", st, st.Store)
	}
	topics, err := adm.ListTopics(testCtx(t), "g-counts-changelog")
	if err != nil || len(topics["g-counts-changelog"].Partitions) != 3 {
		t.Errorf("changelog: %v %v, want 3 partitions", topics, err)
	}
	lib.Destroy(testCtx(t), id)
}
