// Package registry is a schema registry speaking Confluent's REST API:
// subjects, versions, schema ids, references, contexts, compatibility
// levels and modes. It parses each schema it is given (Avro with
// twmb/avro, Protobuf with bufbuild/protocompile, JSON Schema with
// santhosh-tekuri/jsonschema), refusing invalid ones with 422, and checks
// each new version against the subject's compatibility level (BACKWARD,
// FORWARD, FULL, their transitive forms, or NONE), refusing an
// incompatible one with 409. Open keeps it on disk, a journal of its
// changes replayed at the next Open.
//
// Left out: schema rules and rule sets beyond keeping them, tags,
// associations, exporters, encryption keys, tenants, authentication,
// and schema ids per context (ids are unique across the registry).
package registry

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Compatibility levels and modes.
const (
	levelBackward           = "BACKWARD"
	levelBackwardTransitive = "BACKWARD_TRANSITIVE"
	levelForward            = "FORWARD"
	levelForwardTransitive  = "FORWARD_TRANSITIVE"
	levelFull               = "FULL"
	levelFullTransitive     = "FULL_TRANSITIVE"
	levelNone               = "NONE"

	modeReadWrite        = "READWRITE"
	modeReadOnly         = "READONLY"
	modeReadOnlyOverride = "READONLY_OVERRIDE"
	modeImport           = "IMPORT"
)

var levels = []string{levelBackward, levelBackwardTransitive, levelForward, levelForwardTransitive, levelFull, levelFullTransitive, levelNone}
var modes = []string{modeReadWrite, modeReadOnly, modeReadOnlyOverride, modeImport}

// stored is a schema under its id.
type stored struct {
	id       int
	typ      string
	text     string
	refs     []Reference
	metadata json.RawMessage
	ruleSet  json.RawMessage
	key      string // identity: type, canonical text, references, metadata
	parsed   parsed // nil until needed after a replay
}

// version is one version of a subject.
type version struct {
	version int
	schema  *stored
	deleted bool
}

type subject struct {
	versions  []*version // by version number, ascending
	compat    string     // "": not set
	mode      string
	normalize *bool
	group     *string // compatibilityGroup; nil: not set
}

func (s *subject) live() []*version {
	var out []*version
	for _, v := range s.versions {
		if !v.deleted {
			out = append(out, v)
		}
	}
	return out
}

func (s *subject) get(n int) *version {
	for _, v := range s.versions {
		if v.version == n {
			return v
		}
	}
	return nil
}

// Registry is a schema registry; its ServeHTTP answers Confluent's REST
// API. It is safe for concurrent use.
type Registry struct {
	mu        sync.Mutex
	byID      map[int]*stored
	byKey     map[string]*stored
	subjects  map[string]*subject
	nextID    int
	compat    string
	mode      string
	normalize bool
	group     string   // compatibilityGroup; "": none
	journal   *journal // nil: in memory only
	mux       *http.ServeMux
}

// New returns an empty registry, kept in memory: BACKWARD compatibility,
// READWRITE mode.
func New() *Registry {
	r := &Registry{
		byID:     map[int]*stored{},
		byKey:    map[string]*stored{},
		subjects: map[string]*subject{},
		nextID:   1,
		compat:   levelBackward,
		mode:     modeReadWrite,
	}
	r.routes()
	return r
}

// contextOf is the context a qualified subject (":.ctx:name") is in;
// "." is the default context.
func contextOf(subject string) string {
	if rest, ok := strings.CutPrefix(subject, ":."); ok {
		if i := strings.IndexByte(rest, ':'); i >= 0 {
			return "." + rest[:i]
		}
	}
	return "."
}

// qualify names a subject within a context: ":.ctx:name", or name alone
// in the default context.
func qualify(ctx, name string) string {
	if ctx == "" || ctx == "." || strings.HasPrefix(name, ":.") {
		return strings.TrimPrefix(name, ":.:")
	}
	return ":" + ctx + ":" + name
}

func identityKey(typ string, p parsed, refs []Reference, metadata json.RawMessage) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", typ, p.identity())
	for _, r := range refs {
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00", r.Name, r.Subject, r.Version)
	}
	h.Write(compactJSON(metadata))
	return string(h.Sum(nil))
}

func compactJSON(raw json.RawMessage) []byte {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// used reports whether a schema id is still under some version, deleted
// softly or not: a hard delete of its last version takes it away.
func (r *Registry) used(s *stored, ctx string) bool {
	for name, sub := range r.subjects {
		if ctx != "" && contextOf(name) != ctx {
			continue
		}
		for _, v := range sub.versions {
			if v.schema == s {
				return true
			}
		}
	}
	return false
}

// source resolves a schema's references, recursively, into what its
// format parses.
func (r *Registry) source(text string, refs []Reference, depth int) (source, error) {
	src := source{text: text}
	if depth > 32 {
		return src, errInvalidSchema("references nested more than 32 deep")
	}
	for _, ref := range refs {
		if ref.Name == "" || ref.Subject == "" {
			return src, errInvalidSchema("Invalid schema reference %+v: it needs a name, a subject and a version", ref)
		}
		sub := r.subjects[ref.Subject]
		var v *version
		if sub != nil {
			if ref.Version == -1 {
				if live := sub.live(); len(live) > 0 {
					v = live[len(live)-1]
				}
			} else {
				v = sub.get(ref.Version)
			}
		}
		if v == nil {
			return src, errInvalidSchema("Invalid schema: reference %q: subject '%s' version %d not found", ref.Name, ref.Subject, ref.Version)
		}
		rs, err := r.source(v.schema.text, v.schema.refs, depth+1)
		if err != nil {
			return src, err
		}
		src.refs = append(src.refs, namedSource{name: ref.Name, source: rs})
	}
	return src, nil
}

// parse checks a schema: its type, its references, and its text.
func (r *Registry) parse(typ, text string, refs []Reference) (parsed, error) {
	f, err := formatOf(typ)
	if err != nil {
		return nil, errInvalidSchema("%s", err.Error())
	}
	if strings.TrimSpace(text) == "" {
		return nil, errInvalidSchema("Empty schema")
	}
	src, err := r.source(text, refs, 0)
	if err != nil {
		return nil, err
	}
	p, err := f.parse(src)
	if err != nil {
		return nil, errInvalidSchema("Invalid schema of type %s: %s", typ, err.Error())
	}
	return p, nil
}

// parsedOf is a stored schema, parsed.
func (r *Registry) parsedOf(s *stored) (parsed, error) {
	if s.parsed == nil {
		p, err := r.parse(s.typ, s.text, s.refs)
		if err != nil {
			return nil, err
		}
		s.parsed = p
	}
	return s.parsed, nil
}

func (r *Registry) levelOf(subject string) string {
	if s := r.subjects[subject]; s != nil && s.compat != "" {
		return s.compat
	}
	return r.compat
}

// groupOf is the subject's compatibilityGroup, else the global one: the
// metadata property whose value groups its versions for compatibility
// checks; "" for none.
func (r *Registry) groupOf(subject string) string {
	if s := r.subjects[subject]; s != nil && s.group != nil {
		return *s.group
	}
	return r.group
}

// inGroup returns the versions of previous that a schema with metadata
// is checked against: under a compatibilityGroup, as Confluent's, only
// those whose metadata property of that name has the same value (a
// version without it is in the group of the value "").
func (r *Registry) inGroup(subject string, metadata json.RawMessage, previous []*version) []*version {
	group := r.groupOf(subject)
	if group == "" {
		return previous
	}
	want := metadataProperty(metadata, group)
	var out []*version
	for _, v := range previous {
		if metadataProperty(v.schema.metadata, group) == want {
			out = append(out, v)
		}
	}
	return out
}

// metadataProperty is the property key of a schema's metadata
// ({"properties": {key: value}}), "" when it has none.
func metadataProperty(metadata json.RawMessage, key string) string {
	var md struct {
		Properties map[string]string `json:"properties"`
	}
	json.Unmarshal(metadata, &md)
	return md.Properties[key]
}

func (r *Registry) modeOf(subject string) string {
	if s := r.subjects[subject]; s != nil && s.mode != "" {
		return s.mode
	}
	return r.mode
}

// check lists why p cannot be registered after previous under level,
// in Confluent's words; none: it can.
func (r *Registry) check(level, typ string, p parsed, previous []*version) []string {
	if level == levelNone || len(previous) == 0 {
		return nil
	}
	if !strings.HasSuffix(level, "_TRANSITIVE") {
		previous = previous[len(previous)-1:]
	}
	base := strings.TrimSuffix(level, "_TRANSITIVE")
	for i := len(previous) - 1; i >= 0; i-- {
		old := previous[i]
		if old.schema.typ != typ {
			return []string{"Incompatible because of different schema type", fmt.Sprintf("{oldSchemaVersion: %d}", old.version)}
		}
		op, err := r.parsedOf(old.schema)
		if err != nil {
			continue // a schema from before validation, kept as it was
		}
		f, _ := formatOf(typ)
		var msgs []string
		if base == levelForward || base == levelFull {
			msgs = append(msgs, roles(f.canRead(op, p), "old", "new")...)
		}
		if base == levelBackward || base == levelFull {
			msgs = append(msgs, roles(f.canRead(p, op), "new", "old")...)
		}
		if len(msgs) > 0 {
			return append(msgs, fmt.Sprintf("{oldSchemaVersion: %d}", old.version),
				fmt.Sprintf("{oldSchema: '%s'}", old.schema.text),
				fmt.Sprintf("{compatibility: '%s'}", level))
		}
	}
	return nil
}

func roles(msgs []string, reader, writer string) []string {
	for i, m := range msgs {
		msgs[i] = strings.NewReplacer("{reader}", reader, "{writer}", writer).Replace(m)
	}
	return msgs
}

func validLevel(s string) (string, bool) {
	u := strings.ToUpper(s)
	return u, slices.Contains(levels, u)
}

func validMode(s string) (string, bool) {
	u := strings.ToUpper(s)
	return u, slices.Contains(modes, u)
}
