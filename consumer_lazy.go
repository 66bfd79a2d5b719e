package kafkabpl

import (
	"sync"

	"github.com/brain4it/kafkabpl/internal/box"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
)

// A poll's BPL lists are built as the script reads them: a message's key
// and value are copied out of the fetched records when the script first
// reads that message, into an allocation of the message's own, so that a
// message a script keeps costs only itself. The lists a poll gave are
// finished (every message not read yet is copied) when the caller comes
// back to the consumer (its next poll, or its destroy), so that no list
// holds kgo's fetched batches past one poll.

// messages is one topic's records as a source of its kafka-poll list (see
// value.LazyList).
type messages struct{ recs []Record }

// Element makes message i as kafka-poll gives it: its value named by its
// key, or the records form for a record read in that form or that could
// not be deserialized.
func (m *messages) Element(i int) (any, string) {
	r := &m.recs[i]
	if r.cfg.pollRecords || r.Err() != nil {
		return r.List(), "" // in the records form: Record.List copies its own
	}
	key, val := r.r.Key, r.r.Value
	strKey := key != nil && r.cfg.keyDeser == serde.String
	var name string
	var v any
	switch {
	case val != nil && r.cfg.valDeser == serde.String:
		var k []byte
		if strKey {
			k = key
		}
		name, v = box.OwnText(k, val)
	case val != nil:
		v = ownBytes(r.Value())
		if strKey {
			name = string(key)
		}
	case strKey:
		name = string(key)
	}
	if key != nil && !strKey {
		name = keyName(r.Key())
	}
	return v, name
}

// messageList returns one topic's records as kafka-poll gives them, built
// as they are read.
func messageList(recs []Record) *value.List {
	named := false
	for i := range recs {
		if recs[i].r.Key != nil && !recs[i].cfg.pollRecords {
			named = true
			break
		}
	}
	return value.LazyList(len(recs), named, &messages{recs})
}

// pollLists holds the lists built from a consumer's latest poll, to be
// finished when the consumer polls again or is destroyed; poll counts the
// polls, so that a list built from an older poll is finished at once.
type pollLists struct {
	mu    sync.Mutex
	poll  uint64
	lists []*value.List
}

// next finishes the lists of the latest poll and returns the number of
// the poll that starts.
func (p *pollLists) next() uint64 {
	p.mu.Lock()
	lists := p.lists
	p.lists = nil
	p.poll++
	n := p.poll
	p.mu.Unlock()
	for _, l := range lists {
		l.Load()
	}
	clear(lists)
	return n
}

// keep holds l, built from poll, for the next call of next; l is
// finished now when that poll is no longer the latest.
func (p *pollLists) keep(poll uint64, l *value.List) {
	p.mu.Lock()
	if poll == p.poll {
		p.lists = append(p.lists, l)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	l.Load()
}
