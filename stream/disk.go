package stream

import (
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A per-key store's state on local disk (config "state-dir"): package
// store keeps each partition's committed state there, with the changelog
// position it reflects, written in one batch after the batch's Kafka
// transaction commits; a restore reads the changelog from that position,
// not from its start.

// SetStateDir makes dir the state directory of the streams started from
// then on whose config gives no "state-dir" ("" keeps their state in
// memory, the default): kafkabpl run's --state-dir and kafkabpl serve's
// --data-dir set it. A stream whose store cannot be kept on disk (one
// with standbys) keeps it in memory, and the library's log says so; given
// in its config, "state-dir" is an error for such a stream.
func (rt *Runtime) SetStateDir(dir string) { rt.stateDir.Store(&dir) }

// settleStateDir settles where a stream's store is kept: the config's
// "state-dir", else the Runtime's (SetStateDir), else memory.
func (rt *Runtime) settleStateDir(cfg *kafkabpl.ClientConfig, spec *Spec, log func(string)) error {
	if spec.Transform != nil {
		return nil // no store
	}
	dir, given := cfg.StateDir(), cfg.Given("state-dir")
	if d := rt.stateDir.Load(); !given && d != nil {
		dir = *d
	}
	if dir == "" {
		return nil
	}
	var why string
	if spec.Standbys > 0 {
		why = "has standbys, whose copies are kept in memory"
	}
	if why != "" && given {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, `config "state-dir" %q: store %q %s; only a store without standbys is kept on disk`, dir, spec.Store, why)
	}
	if why != "" {
		log(fmt.Sprintf("store %q %s, not under the state directory %s", spec.Store, why, dir))
		dir = ""
	}
	cfg.SetStateDir(dir)
	return nil
}

// openDisk opens the store's directory under the config's state
// directory, "<state-dir>/<group>/<store>"; nil when its state is kept in
// memory.
func openDisk(cfg *kafkabpl.ClientConfig, st *kafkaStore, log func(string)) (*store.Disk, error) {
	if cfg.StateDir() == "" {
		return nil, nil
	}
	dir := filepath.Join(cfg.StateDir(), pathPart(cfg.Group()), pathPart(st.name))
	d, err := store.OpenDisk(dir, store.Identity{Group: cfg.Group(), Store: st.name, Changelog: st.topic}, log)
	if err != nil {
		return nil, kafkabpl.Wrapf(kafkabpl.ErrInvalidConfig, err, `config "state-dir"`)
	}
	return d, nil
}

// pathPart is name as one element of a path: a group's name may hold a
// slash, or be "..".
func pathPart(name string) string {
	p := url.PathEscape(name)
	if p == "." || p == ".." {
		return "%2E" + p[1:]
	}
	return p
}

// closeDisk closes the store's directory, when it has one, once the
// stream's goroutines are done.
func (st *kafkaStore) closeDisk() {
	if st != nil && st.disk != nil {
		st.disk.Close()
	}
}

// logChangelog keeps the batch's changelog record r, whose offset, once
// the brokers acknowledged it, is where its partition's state on disk
// reaches with the batch.
func (st *kafkaStore) logChangelog(r *kgo.Record) {
	if st.disk != nil {
		st.logged = append(st.logged, r)
	}
}

// positions notes, for each partition the batch wrote changelog records
// of, the position its state reaches: the offset after its last record.
func (st *kafkaStore) positions() {
	for _, r := range st.logged {
		if p := st.parts[r.Partition]; p != nil {
			st.state.SetPosition(p.state, r.Offset+1)
		}
	}
	clear(st.logged)
	st.logged = st.logged[:0]
}

// diskStart returns where p's restore starts reading the changelog,
// which holds offsets from start to end: where p's state on disk is, or
// start when the disk holds none of p that it can go on from (then
// emptied, and the log says why). tail reports a restore of the tail.
func (s *stream) diskStart(p *storePart, start, end int64) (from int64, tail bool, err error) {
	st := s.store
	if st.disk == nil {
		return start, false, nil
	}
	pos, ok, err := st.state.Open(p.state)
	if err != nil {
		return 0, false, fmt.Errorf("state directory %s: %w", st.disk.Dir(), err)
	}
	var why string
	switch {
	case !ok:
		why = "holds no state of it"
	case pos > end:
		why = fmt.Sprintf("is at changelog offset %d, ahead of the changelog's end %d (the topic was made again?)", pos, end)
	case pos < start:
		why = fmt.Sprintf("is at changelog offset %d, before the changelog's start %d", pos, start)
	default:
		return pos, true, nil
	}
	if ok {
		if err := st.state.Reset(p.state); err != nil {
			return 0, false, fmt.Errorf("state directory %s: %w", st.disk.Dir(), err)
		}
	}
	s.log(fmt.Sprintf("stream %s: store %q partition %d: the state directory %s %s: restoring it from the changelog's start", s.h.ID(), st.name, p.id, st.disk.Dir(), why))
	return start, false, nil
}

// RestoreStatus is a partition's last restore, since the stream started.
type RestoreStatus struct {
	Partition int32
	Records   int64         // changelog records it applied
	Took      time.Duration // from its start to its end
	Tail      bool          // it read the changelog from the position its state on disk was at, not from the start
}

// noteRestore keeps p's restore for the status.
func (st *kafkaStore) noteRestore(r RestoreStatus) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lastRestores == nil {
		st.lastRestores = map[int32]RestoreStatus{}
	}
	st.lastRestores[r.Partition] = r
}
