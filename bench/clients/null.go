package main

import (
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// nullBroker makes the cluster, while on, answer every produce request with
// success without storing anything: a broker that costs next to nothing,
// so that a produce's time is the client's own. Offsets are counted per
// broker while it is on (a run produces to one topic of one partition), so
// that clients see offsets advance as usual and the run can check that
// every record reached the broker. (Produce v13 names topics by id only.)
type nullBroker struct {
	on   atomic.Bool
	mu   sync.Mutex
	next int64 // records acknowledged since set(true): the next offset
}

func (n *nullBroker) install(kc *kfake.Cluster) {
	kc.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl() // stay installed; off, the request goes on to kfake
		if !n.on.Load() {
			return nil, nil, false
		}
		return n.answer(req.(*kmsg.ProduceRequest)), nil, true
	})
}

func (n *nullBroker) set(on bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if on {
		n.next = 0
	}
	n.on.Store(on)
}

// count is the number of records acknowledged since set(true).
func (n *nullBroker) count() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.next
}

func (n *nullBroker) answer(req *kmsg.ProduceRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			rp.BaseOffset = n.next
			rp.LogAppendTime = -1
			n.next += records(p.Records)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// records counts the records in a partition's record batches (magic 2,
// what every client here sends).
func records(b []byte) int64 {
	var n int64
	for len(b) > 0 {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			return n
		}
		n += int64(rb.NumRecords)
		size := 12 + int(rb.Length) // FirstOffset (8) and Length (4) precede the rest
		if size <= 12 || size > len(b) {
			return n
		}
		b = b[size:]
	}
	return n
}
