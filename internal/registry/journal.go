package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
)

// journal keeps a registry on disk: each change is a line of JSON, the
// request that made it (as earlier versions of kafkabpl wrote them, when
// franz-go's srfake was the registry) and, for a registered schema, the id
// and version it got. Open replays the lines in order.
type journal struct {
	f *os.File
}

// entry is one line of the journal.
type entry struct {
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	Body    json.RawMessage `json:"body,omitempty"`
	ID      int             `json:"id,omitempty"`
	Version int             `json:"version,omitempty"`
}

// Open returns a registry kept in file: the changes it holds are replayed,
// and every change from now on is appended to it and synced to disk
// before it is answered. A line cut short (the process killed while
// writing it) is dropped. Schemas keep their ids and versions; a schema
// registered before the registry checked schemas is kept as it was.
func Open(file string) (*Registry, error) {
	r := New()
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("schema registry journal: %w", err)
	}
	var good int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxBody+4096)
	for sc.Scan() {
		line := sc.Bytes()
		var e entry
		if json.Unmarshal(line, &e) != nil {
			break
		}
		r.replay(&e)
		good += int64(len(line)) + 1
	}
	if err := f.Truncate(good); err != nil { // drop a torn last line
		f.Close()
		return nil, fmt.Errorf("schema registry journal: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("schema registry journal: %w", err)
	}
	r.journal = &journal{f: f}
	return r, nil
}

func (r *Registry) replay(e *entry) {
	req := httptest.NewRequest(e.Method, e.Path, bytes.NewReader(e.Body))
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	req = req.WithContext(context.WithValue(req.Context(), replayKey{}, e))
	r.ServeHTTP(httptest.NewRecorder(), req)
}

// Close closes the registry's journal; the registry answers no more
// changes after it.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.journal == nil {
		return nil
	}
	err := r.journal.f.Close()
	r.journal = &journal{} // closed: changes fail
	return err
}

var errClosed = errors.New("the schema registry is closed")

// commit makes a change: written to the journal first (and synced), then
// applied. id and version are a registration's.
func (r *Registry) commit(req *request, id, ver int, apply func()) error {
	if req.replay == nil && r.journal != nil {
		if r.journal.f == nil {
			return errClosed
		}
		e := entry{Method: req.Method, Path: req.URL.RequestURI(), ID: id, Version: ver}
		if body := bytes.TrimSpace(req.body); len(body) > 0 && json.Valid(body) {
			var b bytes.Buffer
			json.Compact(&b, body)
			e.Body = b.Bytes()
		}
		if req.ctx != "" {
			e.Path = "/contexts/" + req.ctx + e.Path
		}
		line, _ := json.Marshal(e)
		if _, err := r.journal.f.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("cannot persist the change: %w", err)
		}
		if err := r.journal.f.Sync(); err != nil {
			return fmt.Errorf("cannot persist the change: %w", err)
		}
	}
	apply()
	return nil
}

var _ http.Handler = (*Registry)(nil)
