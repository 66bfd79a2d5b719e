package embedded

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Transactions a crash left open (issue 40).
//
// When kfake reloads a data dir that was not closed cleanly (kill -9), it
// replays the partitions' logs and lists every transaction that has no
// COMMIT or ABORT marker as aborted (persist.go, loadPartitionFullReplay),
// but it writes no ABORT marker. A read_committed client, told that a
// producer's transaction is aborted from some offset, skips that producer's
// records from there until the producer's next ABORT marker (KIP-98; kgo
// and the Java client alike). With no marker, that range never ends: the
// producer's later transactions, committed after the restart under the same
// producer id, stay hidden from every read_committed reader.
//
// Before the cluster listens on its real ports, endCrashAborts starts kfake
// on the directory alone, on free ports only it knows, reads every
// partition as a read_committed client does, and writes an ABORT marker
// (WriteTxnMarkers, as Kafka's transaction coordinator does) for each
// aborted transaction that has none, then closes that cluster cleanly. The
// marker goes at the end of the log, before anything the restarted producer
// writes, which is where Kafka's coordinator would have put it when the
// transaction timed out.

// repairRequestTimeout bounds each request of the repair: a fetch of up to
// repairFetchBytes from this process's own cluster.
const (
	repairRequestTimeout = 30 * time.Second
	repairFetchBytes     = 16 << 20
)

// sessionStateFile is the file kfake writes in a data dir when it closes
// cleanly and removes when it reloads the dir: its presence means the last
// run ended with Close, so every partition has an up-to-date snapshot and no
// transaction was aborted by a replay.
const sessionStateFile = "session_state.json"

// endCrashAborts writes the ABORT markers that kfake's crash recovery of
// cfg.dataDir leaves out (see above). It does nothing for a new directory
// or one that was closed cleanly.
func endCrashAborts(ctx context.Context, cfg *config) error {
	if !needsRepair(cfg.dataDir) {
		return nil
	}
	// Only what persistence needs: no listener on the real ports, and
	// none of the caller's kfake options (SASL, TLS or ACLs would lock
	// this client out; the broker configs they set are in the dir).
	rcfg := config{
		brokers:    cfg.brokers,
		partitions: cfg.partitions,
		noAuto:     true,
		dataDir:    cfg.dataDir,
		syncWrites: cfg.syncWrites,
	}
	kc, err := kfake.NewCluster(rcfg.kfakeOptions()...)
	if err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	defer kc.Close() // writes the markers' partitions' snapshots too
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		return fmt.Errorf("embedded: ending crashed transactions: %w", err)
	}
	defer cl.Close()
	if err := repairAborts(ctx, cl, kc); err != nil {
		return fmt.Errorf("embedded: ending crashed transactions: %w", err)
	}
	return nil
}

// needsRepair says whether dir holds a cluster's data (kfake's meta.json)
// that was not closed cleanly.
func needsRepair(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); err != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, sessionStateFile))
	return errors.Is(err, os.ErrNotExist)
}

// repairAborts scans every partition of kc and ends its unended aborted
// transactions.
func repairAborts(ctx context.Context, cl *kgo.Client, kc *kfake.Cluster) error {
	rctx, cancel := context.WithTimeout(ctx, repairRequestTimeout)
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, cl)
	cancel()
	if err != nil {
		return err
	}
	for _, t := range meta.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return fmt.Errorf("topic %v: %w", t.Topic, err)
		}
		for _, p := range t.Partitions {
			tp := topicPartition{topic: *t.Topic, id: t.TopicID, partition: p.Partition, leader: p.Leader}
			info := kc.PartitionInfo(tp.topic, tp.partition)
			if info == nil {
				continue // deleted meanwhile; nothing else runs here
			}
			open, err := unendedAborts(ctx, cl, tp, info.LogStartOffset)
			if err != nil {
				return fmt.Errorf("%s/%d: %w", tp.topic, tp.partition, err)
			}
			if err := writeAbortMarkers(ctx, cl, tp, open); err != nil {
				return fmt.Errorf("%s/%d: %w", tp.topic, tp.partition, err)
			}
		}
	}
	return nil
}

type topicPartition struct {
	topic     string
	id        [16]byte
	partition int32
	leader    int32
}

// unended is an aborted transaction no ABORT marker ends: its producer, and
// the epoch of its last record batch (the marker's epoch).
type unended struct {
	producerID int64
	epoch      int16
}

// unendedAborts reads a partition from offset from to its last stable
// offset as a read_committed client would, and returns the aborted
// transactions the broker lists that no ABORT marker of their producer
// ends, one entry per transaction.
func unendedAborts(ctx context.Context, cl *kgo.Client, tp topicPartition, from int64) ([]unended, error) {
	var (
		listed  = make(map[[2]int64]bool) // {producer id, first offset} seen in a response
		pending = make(map[int64][]int64) // producer id -> first offsets of unended aborts, ascending
		epochs  = make(map[int64]int16)   // producer id -> epoch of its last batch
		order   []int64                   // producer ids in pending, in order seen
		offset  = from
	)
	for {
		sp, err := fetchCommitted(ctx, cl, tp, offset)
		if err != nil {
			return nil, err
		}
		for _, a := range sp.AbortedTransactions {
			k := [2]int64{a.ProducerID, a.FirstOffset}
			if listed[k] {
				continue
			}
			listed[k] = true
			if _, ok := pending[a.ProducerID]; !ok {
				order = append(order, a.ProducerID)
			}
			pending[a.ProducerID] = append(pending[a.ProducerID], a.FirstOffset)
			slices.Sort(pending[a.ProducerID])
		}
		raw, batches := sp.RecordBatches, 0
		for len(raw) >= 12 {
			size := 12 + int(int32(binary.BigEndian.Uint32(raw[8:12])))
			if size < 12 || size > len(raw) {
				break // a partial batch at the end of the response
			}
			var b kmsg.RecordBatch
			if err := b.ReadFrom(raw[:size]); err != nil {
				return nil, fmt.Errorf("batch at offset %d: %w", offset, err)
			}
			raw = raw[size:]
			batches++
			offset = b.FirstOffset + int64(b.LastOffsetDelta) + 1
			const transactional, control = 0x10, 0x20
			switch {
			case b.Attributes&transactional == 0:
			case b.Attributes&control == 0:
				epochs[b.ProducerID] = b.ProducerEpoch
			case isAbortMarker(&b):
				// It ends the producer's oldest abort that began before it.
				if firsts := pending[b.ProducerID]; len(firsts) > 0 && firsts[0] < b.FirstOffset {
					pending[b.ProducerID] = firsts[1:]
				}
			}
		}
		if batches == 0 || offset >= sp.LastStableOffset {
			break
		}
	}
	var open []unended
	for _, pid := range order {
		for range pending[pid] {
			open = append(open, unended{producerID: pid, epoch: epochs[pid]})
		}
	}
	return open, nil
}

// isAbortMarker says whether a control batch holds an ABORT marker: its
// record's key is a version (int16) and a type (int16), 0 for ABORT.
func isAbortMarker(b *kmsg.RecordBatch) bool {
	var r kmsg.Record
	if err := r.ReadFrom(b.Records); err != nil || len(r.Key) < 4 {
		return false
	}
	return binary.BigEndian.Uint16(r.Key[2:4]) == 0
}

// fetchCommitted fetches a partition from offset, read_committed, from its
// leader.
func fetchCommitted(ctx context.Context, cl *kgo.Client, tp topicPartition, offset int64) (*kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxBytes = repairFetchBytes
	req.IsolationLevel = 1 // read_committed: the response lists aborted transactions
	req.SessionEpoch = -1  // no fetch session
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = tp.topic
	rt.TopicID = tp.id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = tp.partition
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = repairFetchBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	rctx, cancel := context.WithTimeout(ctx, repairRequestTimeout)
	defer cancel()
	kresp, err := cl.Broker(int(tp.leader)).Request(rctx, req)
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			sp := &resp.Topics[i].Partitions[j]
			if sp.Partition != tp.partition {
				continue
			}
			if err := kerr.ErrorForCode(sp.ErrorCode); err != nil {
				return nil, err
			}
			return sp, nil
		}
	}
	return nil, errors.New("fetch response without the partition")
}

// writeAbortMarkers writes an ABORT marker for each transaction in open on
// the partition, in order.
func writeAbortMarkers(ctx context.Context, cl *kgo.Client, tp topicPartition, open []unended) error {
	if len(open) == 0 {
		return nil
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	for _, u := range open {
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID = u.producerID
		m.ProducerEpoch = u.epoch
		m.Committed = false
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic = tp.topic
		mt.Partitions = []int32{tp.partition}
		m.Topics = append(m.Topics, mt)
		req.Markers = append(req.Markers, m)
	}
	rctx, cancel := context.WithTimeout(ctx, repairRequestTimeout)
	defer cancel()
	kresp, err := cl.Broker(int(tp.leader)).Request(rctx, req)
	if err != nil {
		return err
	}
	for _, m := range kresp.(*kmsg.WriteTxnMarkersResponse).Markers {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return fmt.Errorf("abort marker of producer %d: %w", m.ProducerID, err)
				}
			}
		}
	}
	return nil
}
