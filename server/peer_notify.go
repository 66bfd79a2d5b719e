package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// module-notify across servers: a module whose stateful stream several
// servers run in one group draws, on any of them, state that any of them
// commits. (module-notify "@fn" ...) called in one tells the monitors of
// the same module in the group's other servers too, so that a dashboard
// updates whichever server committed the change: it posts the names to
// each peer's query endpoint (URL/MODULE, what the streams advertise;
// stream.Runtime.Peers) with the header kafka-module-notify: 1, the
// names as a BPL list, and the module's access key, as a forwarded store
// query does. The peer tells its own monitors only (never its peers: no
// echo). The posts go out on a goroutine of the module's, at most one
// round at a time: the names notified meanwhile are sent together by the
// next round, so that a stream that commits many batches a second costs
// its peers a post per round trip, not per batch. A peer that does not
// answer within peerNotifyTime is skipped for that round; its failure is
// logged once, until it answers again.

// PeerNotifyHeader marks a POST /MODULE as a module-notify that another
// server of the module's group forwarded.
const PeerNotifyHeader = "kafka-module-notify"

// peerNotifyTime bounds a round of posts, and the description of the
// groups that finds the peers.
const peerNotifyTime = 2 * time.Second

// peerNotify is a module's forwarding of module-notify to its peers.
type peerNotify struct {
	mu      sync.Mutex
	pending []string        // the names to send in the next round
	running bool            // a round is under way, or about to be
	failing map[string]bool // the peers whose last post failed (logged once)
}

// notifyPeers sends fns to the module's peers, in the background (see
// above). A module without streams has none, and sends nothing.
func (m *Module) notifyPeers(fns []string) {
	if len(m.Library().Handles(kafkabpl.Stream)) == 0 {
		return
	}
	pn := &m.peers
	pn.mu.Lock()
	defer pn.mu.Unlock()
	for _, fn := range fns {
		if !slices.Contains(pn.pending, fn) {
			pn.pending = append(pn.pending, fn)
		}
	}
	if !pn.running {
		pn.running = true
		go m.tellPeers()
	}
}

// tellPeers sends the pending names to every peer, round after round,
// until none is pending.
func (m *Module) tellPeers() {
	pn := &m.peers
	for {
		pn.mu.Lock()
		fns := pn.pending
		pn.pending = nil
		if len(fns) == 0 {
			pn.running = false
			pn.mu.Unlock()
			return
		}
		pn.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), peerNotifyTime)
		peers, _ := stream.Of(m.Library()).Peers(ctx) // a group rebalancing: the peers it last had
		body := value.Format(value.NewList(stringsToAny(fns)...))
		var wg sync.WaitGroup
		for _, peer := range peers {
			wg.Go(func() { m.notePeer(peer, m.postNotify(ctx, peer, body)) })
		}
		wg.Wait()
		cancel()
	}
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// postNotify posts body, a list of function names, to the peer's module.
func (m *Module) postNotify(ctx context.Context, endpoint, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set(PeerNotifyHeader, "1")
	req.Header.Set("Content-Type", bplContentType)
	if key := m.accessKey(); key != "" {
		req.Header.Set(AccessKeyHeader, key)
	}
	resp, err := m.srv.forwards.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d %s", resp.StatusCode, strings.TrimSpace(string(answer)))
	}
	return nil
}

// notePeer logs a peer's failure once, and its recovery.
func (m *Module) notePeer(peer string, err error) {
	pn := &m.peers
	pn.mu.Lock()
	was := pn.failing[peer]
	if pn.failing == nil {
		pn.failing = map[string]bool{}
	}
	pn.failing[peer] = err != nil
	pn.mu.Unlock()
	switch {
	case err != nil && !was:
		m.srv.logf("module %s: module-notify not told to %s (its dashboards stay as they were until it is told again): %v", m.name, peer, err)
	case err == nil && was:
		m.srv.logf("module %s: module-notify told to %s again", m.name, peer)
	}
}

// peerNotify answers POST /MODULE with a kafka-module-notify header: it
// tells the module's monitors watching the names in the body, a BPL list
// of strings, and answers how many were told.
func (s *Server) peerNotify(w http.ResponseWriter, r *http.Request, t Target) error {
	m, body, err := s.peerRequest(w, r, t, "a module-notify")
	if err != nil {
		return err
	}
	var list *value.List
	if vs, err := value.Parse(body); err == nil && len(vs) == 1 {
		list, _ = vs[0].(*value.List)
	}
	if list == nil {
		return fmt.Errorf("%w: %s: want a list of function names, got %q", kafkabpl.ErrInvalidArgument, PeerNotifyHeader, body)
	}
	var fns []string
	for _, v := range list.Values() {
		fn, ok := v.(string)
		if !ok {
			return fmt.Errorf("%w: %s: want a list of function names, got %q", kafkabpl.ErrInvalidArgument, PeerNotifyHeader, body)
		}
		fns = append(fns, fn)
	}
	return writeText(w, bplContentType, fmt.Sprint(m.Notify(fns...)))
}
