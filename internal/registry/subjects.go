package registry

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"
)

func contextWith(hr *http.Request, k, v any) context.Context {
	return context.WithValue(hr.Context(), k, v)
}

// schemaJSON is a schema as the API answers it.
type schemaJSON struct {
	Subject    string          `json:"subject,omitempty"`
	Version    int             `json:"version,omitempty"`
	ID         int             `json:"id,omitempty"`
	GUID       string          `json:"guid,omitempty"`
	SchemaType string          `json:"schemaType,omitempty"`
	References []Reference     `json:"references,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	RuleSet    json.RawMessage `json:"ruleSet,omitempty"`
	Schema     string          `json:"schema"`
}

func guidOf(s *stored) string {
	h := sha256.Sum256([]byte(s.key))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// text is a schema's text as a request's format asks: for Protobuf,
// format=serialized is its FileDescriptorProto in base64.
func (r *Registry) text(req *request, s *stored) string {
	if s.typ == typeProtobuf && req.URL.Query().Get("format") == "serialized" {
		if p, err := r.parsedOf(s); err == nil {
			return p.(*protobufSchema).serialized(fmt.Sprintf("schema-%d.proto", s.id))
		}
	}
	return s.text
}

func (r *Registry) schemaJSON(req *request, s *stored) schemaJSON {
	out := schemaJSON{References: s.refs, Metadata: s.metadata, RuleSet: s.ruleSet, Schema: r.text(req, s)}
	if s.typ != typeAvro {
		out.SchemaType = s.typ
	}
	return out
}

func (r *Registry) versionJSON(req *request, subject string, v *version) schemaJSON {
	out := r.schemaJSON(req, v.schema)
	out.Subject, out.Version, out.ID, out.GUID = subject, v.version, v.schema.id, guidOf(v.schema)
	return out
}

// registerBody is a schema as a request gives it.
type registerBody struct {
	Schema     *string         `json:"schema"`
	SchemaType string          `json:"schemaType"`
	References []Reference     `json:"references"`
	Metadata   json.RawMessage `json:"metadata"`
	RuleSet    json.RawMessage `json:"ruleSet"`
	ID         int             `json:"id"`
	Version    int             `json:"version"`
}

func decodeBody(req *request, v any) error {
	if err := json.Unmarshal(req.body, v); err != nil {
		return errf(http.StatusUnprocessableEntity, 422, "Unrecognized or malformed request body: %s", err.Error())
	}
	return nil
}

func readSchema(req *request) (registerBody, string, error) {
	var b registerBody
	if err := decodeBody(req, &b); err != nil {
		return b, "", err
	}
	if b.Schema == nil {
		return b, "", errInvalidSchema("Empty schema")
	}
	typ, err := schemaType(b.SchemaType)
	if err != nil {
		return b, "", errInvalidSchema("Invalid schema type %s", b.SchemaType)
	}
	return b, typ, nil
}

func validSubject(s string) error {
	if s == "" || len(s) > 255 || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return errf(http.StatusUnprocessableEntity, codeInvalidSubject, "The specified subject is not valid.")
	}
	return nil
}

// normalizing reports whether a registration normalizes its schema: as
// the request or the subject's (else the global) config says.
func (r *Registry) normalizing(req *request, subject string) bool {
	if flag(req, "normalize") {
		return true
	}
	if s := r.subjects[subject]; s != nil && s.normalize != nil {
		return *s.normalize
	}
	return r.normalize
}

// register: POST /subjects/{subject}/versions.
func (r *Registry) register(req *request) (any, error) {
	subject := subjectOf(req)
	if err := validSubject(subject); err != nil {
		return nil, err
	}
	b, typ, err := readSchema(req)
	if err != nil {
		return nil, err
	}
	mode := r.modeOf(subject)
	replay := req.replay != nil
	if !replay && (mode == modeReadOnly || mode == modeReadOnlyOverride) {
		return nil, errReadOnly(subject)
	}
	imports := mode == modeImport || replay
	p, err := r.parse(typ, *b.Schema, b.References)
	if err != nil && !replay {
		return nil, err
	}
	text, key := *b.Schema, ""
	if p != nil {
		if r.normalizing(req, subject) {
			text = p.normalized()
		} else if c, ok := p.(canonicaler); ok {
			text = c.canonical() // Avro: as Confluent's registry stores it
		}
		key = identityKey(typ, p, b.References, b.Metadata)
	} else { // a schema kept from before the registry checked them
		h := sha256.Sum256([]byte(typ + "\x00" + text))
		key = "unchecked:" + string(h[:])
	}
	sub := r.subjects[subject]
	var live []*version
	if sub != nil {
		live = sub.live()
	}
	wantID, wantVersion := b.ID, b.Version
	if replay && req.replay.ID > 0 {
		wantID, wantVersion = req.replay.ID, req.replay.Version
	}
	if wantVersion == 0 {
		for _, v := range live {
			if v.schema.key == key && (wantID <= 0 || wantID == v.schema.id) {
				return map[string]int{"id": v.schema.id}, nil
			}
		}
	}
	if !imports {
		if msgs := r.check(r.levelOf(subject), typ, p, r.inGroup(subject, b.Metadata, live)); len(msgs) > 0 {
			return nil, errf(http.StatusConflict, codeIncompatible,
				"Schema being registered is incompatible with an earlier schema for subject \"%s\", details: [%s]", subject, strings.Join(msgs, ", "))
		}
	}
	s := r.byKey[key]
	switch {
	case wantID > 0 && imports:
		if have := r.byID[wantID]; have != nil && have.key != key {
			return nil, errf(http.StatusUnprocessableEntity, codeIDDoesNotMatch,
				"Schema already registered with id %d instead of input id %d", have.id, wantID)
		}
		if s == nil || s.id != wantID {
			s = r.byID[wantID]
		}
	case wantID > 0 && (s == nil || s.id != wantID):
		return nil, errf(http.StatusUnprocessableEntity, codeNotPermitted, "Overwrite new schema with id %d is not permitted outside IMPORT mode", wantID)
	}
	id := 0
	if s != nil {
		id = s.id
	} else if wantID > 0 {
		id = wantID
	} else {
		id = r.nextID
	}
	next := 1
	if sub != nil && len(sub.versions) > 0 {
		next = sub.versions[len(sub.versions)-1].version + 1
	}
	if wantVersion > 0 {
		if !imports && wantVersion != next {
			return nil, errInvalidSchema("Version is not one more than previous version")
		}
		if sub != nil && sub.get(wantVersion) != nil {
			if replay {
				return nil, nil
			}
			return nil, errInvalidVersion(fmt.Sprint(wantVersion))
		}
		next = wantVersion
	}
	err = r.commit(req, id, next, func() {
		if s == nil {
			s = &stored{id: id, typ: typ, text: text, refs: b.References, metadata: b.Metadata, ruleSet: b.RuleSet, key: key, parsed: p}
			r.byID[id] = s
			if r.byKey[key] == nil {
				r.byKey[key] = s
			}
		}
		r.nextID = max(r.nextID, id+1)
		if sub == nil {
			sub = r.subject(subject)
		}
		sub.versions = append(sub.versions, &version{version: next, schema: s})
		slices.SortFunc(sub.versions, func(a, b *version) int { return a.version - b.version })
	})
	if err != nil {
		return nil, err
	}
	return map[string]int{"id": id}, nil
}

// visible is a subject's versions a request sees, per deleted and
// deletedOnly; nil when the subject is unknown.
func visible(req *request, sub *subject) []*version {
	if sub == nil {
		return nil
	}
	keep := deletedFilter(req)
	var out []*version
	for _, v := range sub.versions {
		if keep(v.deleted) {
			out = append(out, v)
		}
	}
	return out
}

// lookup: POST /subjects/{subject}: the version holding a schema.
func (r *Registry) lookup(req *request) (any, error) {
	subject := subjectOf(req)
	b, typ, err := readSchema(req)
	if err != nil {
		return nil, err
	}
	vs := visible(req, r.subjects[subject])
	if len(vs) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	p, err := r.parse(typ, *b.Schema, b.References)
	if err != nil {
		return nil, err
	}
	key := identityKey(typ, p, b.References, b.Metadata)
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].schema.key == key {
			return r.versionJSON(req, subject, vs[i]), nil
		}
	}
	return nil, errSchemaNotFound()
}

// getVersions: GET /subjects/{subject}/versions.
func (r *Registry) getVersions(req *request) (any, error) {
	subject := subjectOf(req)
	vs := visible(req, r.subjects[subject])
	if len(vs) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	out := []int{}
	for _, v := range vs {
		out = append(out, v.version)
	}
	return out, nil
}

// find is a subject's version as a path names it ("latest": the newest
// the request sees).
func (r *Registry) find(req *request, subject, which string) (*version, error) {
	n, err := versionOf(which)
	if err != nil {
		return nil, err
	}
	sub := r.subjects[subject]
	seen := func(v *version) bool { return !v.deleted || flag(req, "deleted") }
	if sub == nil || !slices.ContainsFunc(sub.versions, seen) {
		return nil, errSubjectNotFound(subject)
	}
	for i := len(sub.versions) - 1; i >= 0; i-- {
		if v := sub.versions[i]; seen(v) && (n == 0 || v.version == n) {
			return v, nil
		}
	}
	return nil, errVersionNotFound(n)
}

// getVersion: GET /subjects/{subject}/versions/{version}.
func (r *Registry) getVersion(req *request) (any, error) {
	subject := subjectOf(req)
	v, err := r.find(req, subject, req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	return r.versionJSON(req, subject, v), nil
}

// getRawVersion: GET /subjects/{subject}/versions/{version}/schema, the
// schema's text alone.
func (r *Registry) getRawVersion(req *request) (any, error) {
	v, err := r.find(req, subjectOf(req), req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	return rawText(r.text(req, v.schema)), nil
}

// referrers lists the ids of the schemas that reference a subject's
// version, under versions that keep(deleted) accepts, from subjects
// other than skip.
func (r *Registry) referrers(subject string, ver int, skip string, keep func(bool) bool) []int {
	var ids []int
	for name, sub := range r.subjects {
		if name == skip {
			continue
		}
		for _, v := range sub.versions {
			if !keep(v.deleted) {
				continue
			}
			for _, ref := range v.schema.refs {
				if ref.Subject == subject && ref.Version == ver && !slices.Contains(ids, v.schema.id) {
					ids = append(ids, v.schema.id)
				}
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// getReferencedBy: GET /subjects/{subject}/versions/{version}/referencedby.
func (r *Registry) getReferencedBy(req *request) (any, error) {
	subject := subjectOf(req)
	v, err := r.find(req, subject, req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	ids := r.referrers(subject, v.version, "", deletedFilter(req))
	if ids == nil {
		ids = []int{}
	}
	return ids, nil
}

func errReferenced(subject string, ver int) error {
	return errf(http.StatusUnprocessableEntity, codeReferenceExists,
		"One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=%s,version=%d}.", subject, ver)
}

func (r *Registry) readOnly(subject string) bool {
	m := r.modeOf(subject)
	return m == modeReadOnly || m == modeReadOnlyOverride
}

// deleteVersion: DELETE /subjects/{subject}/versions/{version}: soft, or
// with permanent=true hard, which only a soft-deleted version takes.
func (r *Registry) deleteVersion(req *request) (any, error) {
	subject := subjectOf(req)
	permanent := flag(req, "permanent")
	n, err := versionOf(req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	if r.readOnly(subject) && req.replay == nil {
		return nil, errReadOnly(subject)
	}
	sub := r.subjects[subject]
	if sub == nil || len(sub.versions) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	var v *version
	if n == 0 {
		if live := sub.live(); len(live) > 0 {
			v = live[len(live)-1]
		}
	} else {
		v = sub.get(n)
	}
	switch {
	case v == nil:
		return nil, errVersionNotFound(n)
	case !permanent && v.deleted:
		return nil, errf(http.StatusNotFound, codeVersionSoftDeleted,
			"Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", subject, v.version)
	case permanent && !v.deleted:
		return nil, errf(http.StatusNotFound, codeVersionNotSoftDeleted,
			"Subject '%s' Version %d was not deleted first before being permanently deleted", subject, v.version)
	}
	keep := func(d bool) bool { return permanent || !d }
	if ids := r.referrers(subject, v.version, "", keep); len(ids) > 0 {
		return nil, errReferenced(subject, v.version)
	}
	err = r.commit(req, 0, 0, func() {
		if permanent {
			sub.versions = slices.DeleteFunc(sub.versions, func(x *version) bool { return x == v })
		} else {
			v.deleted = true
		}
	})
	if err != nil {
		return nil, err
	}
	return v.version, nil
}

// deleteSubject: DELETE /subjects/{subject}: its live versions softly,
// or with permanent=true (once they are soft-deleted) all of them, its
// config and mode too.
func (r *Registry) deleteSubject(req *request) (any, error) {
	subject := subjectOf(req)
	permanent := flag(req, "permanent")
	if r.readOnly(subject) && req.replay == nil {
		return nil, errReadOnly(subject)
	}
	sub := r.subjects[subject]
	if sub == nil || len(sub.versions) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	live := sub.live()
	switch {
	case !permanent && len(live) == 0:
		return nil, errf(http.StatusNotFound, codeSubjectSoftDeleted,
			"Subject '%s' was soft deleted.Set permanent=true to delete permanently", subject)
	case permanent && len(live) > 0:
		return nil, errf(http.StatusNotFound, codeSubjectNotSoftDeleted,
			"Subject '%s' was not deleted first before being permanently deleted", subject)
	}
	targets := live
	if permanent {
		targets = sub.versions
	}
	keep := func(d bool) bool { return permanent || !d }
	out := []int{}
	for _, v := range targets {
		if ids := r.referrers(subject, v.version, subject, keep); len(ids) > 0 {
			return nil, errReferenced(subject, v.version)
		}
		out = append(out, v.version)
	}
	err := r.commit(req, 0, 0, func() {
		if permanent {
			delete(r.subjects, subject)
			return
		}
		for _, v := range live {
			v.deleted = true
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// getByMetadata: GET /subjects/{subject}/metadata?key=K&value=V...: the
// newest live version whose metadata has those properties.
func (r *Registry) getByMetadata(req *request) (any, error) {
	subject := subjectOf(req)
	sub := r.subjects[subject]
	if sub == nil || len(sub.live()) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	keys, values := req.URL.Query()["key"], req.URL.Query()["value"]
	live := sub.live()
	for i := len(live) - 1; i >= 0; i-- {
		var md struct {
			Properties map[string]string `json:"properties"`
		}
		json.Unmarshal(live[i].schema.metadata, &md)
		match := true
		for j, k := range keys {
			if j >= len(values) || md.Properties[k] != values[j] {
				match = false
			}
		}
		if match {
			return r.versionJSON(req, subject, live[i]), nil
		}
	}
	return nil, errSchemaNotFound()
}
