package registry

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// byIDOf is the schema a path's id names, if some version still holds it
// (in the request's context, or the subject parameter's).
func (r *Registry) byIDOf(req *request) (*stored, error) {
	id, err := strconv.Atoi(req.PathValue("id"))
	if err != nil {
		return nil, errSchemaNotFound()
	}
	ctx := req.ctx
	if s := req.URL.Query().Get("subject"); s != "" && ctx == "" {
		ctx = contextOf(s)
	}
	s := r.byID[id]
	if s == nil || !r.used(s, ctx) {
		return nil, errSchemaIDNotFound(id)
	}
	return s, nil
}

// getSchemaByID: GET /schemas/ids/{id}.
func (r *Registry) getSchemaByID(req *request) (any, error) {
	s, err := r.byIDOf(req)
	if err != nil {
		return nil, err
	}
	out := r.schemaJSON(req, s)
	if flag(req, "fetchMaxId") {
		return struct {
			schemaJSON
			MaxID int `json:"maxId"`
		}{out, r.nextID - 1}, nil
	}
	return out, nil
}

// getRawSchemaByID: GET /schemas/ids/{id}/schema, the text alone.
func (r *Registry) getRawSchemaByID(req *request) (any, error) {
	s, err := r.byIDOf(req)
	if err != nil {
		return nil, err
	}
	return rawText(r.text(req, s)), nil
}

type subjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// usesOf lists the subjects' versions that hold a schema, as a request
// filters them (deleted, subject, context).
func (r *Registry) usesOf(req *request, s *stored) []subjectVersion {
	keep := deletedFilter(req)
	only := req.URL.Query().Get("subject")
	out := []subjectVersion{}
	for _, name := range r.subjectNames() {
		if (only != "" && name != only) || (req.ctx != "" && contextOf(name) != req.ctx) {
			continue
		}
		for _, v := range r.subjects[name].versions {
			if v.schema == s && keep(v.deleted) {
				out = append(out, subjectVersion{name, v.version})
			}
		}
	}
	return out
}

func (r *Registry) subjectNames() []string {
	names := make([]string, 0, len(r.subjects))
	for n := range r.subjects {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// getSubjectsByID: GET /schemas/ids/{id}/subjects.
func (r *Registry) getSubjectsByID(req *request) (any, error) {
	s, err := r.byIDOf(req)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, u := range r.usesOf(req, s) {
		if !slices.Contains(out, u.Subject) {
			out = append(out, u.Subject)
		}
	}
	return out, nil
}

// getVersionsByID: GET /schemas/ids/{id}/versions.
func (r *Registry) getVersionsByID(req *request) (any, error) {
	s, err := r.byIDOf(req)
	if err != nil {
		return nil, err
	}
	return r.usesOf(req, s), nil
}

// byGUID is the live version holding the schema a GUID names, the
// default context's first.
func (r *Registry) byGUID(guid string) (string, *version) {
	var fallback *version
	var fallbackSubject string
	for _, name := range r.subjectNames() {
		for _, v := range r.subjects[name].versions {
			if v.deleted || guidOf(v.schema) != guid {
				continue
			}
			if contextOf(name) == "." {
				return name, v
			}
			if fallback == nil {
				fallback, fallbackSubject = v, name
			}
		}
	}
	return fallbackSubject, fallback
}

// getSchemaByGUID: GET /schemas/guids/{guid}.
func (r *Registry) getSchemaByGUID(req *request) (any, error) {
	_, v := r.byGUID(req.PathValue("guid"))
	if v == nil {
		return nil, errSchemaNotFound()
	}
	out := r.schemaJSON(req, v.schema)
	out.GUID = guidOf(v.schema)
	return out, nil
}

// getIDsByGUID: GET /schemas/guids/{guid}/ids.
func (r *Registry) getIDsByGUID(req *request) (any, error) {
	_, v := r.byGUID(req.PathValue("guid"))
	if v == nil {
		return nil, errSchemaNotFound()
	}
	var out []map[string]any
	seen := map[string]bool{}
	for _, name := range r.subjectNames() {
		for _, x := range r.subjects[name].versions {
			if c := contextOf(name); x.schema == v.schema && !x.deleted && !seen[c] {
				seen[c] = true
				out = append(out, map[string]any{"context": c, "id": x.schema.id})
			}
		}
	}
	return out, nil
}

// getSchemas: GET /schemas: every version's schema, filtered by
// subjectPrefix, deleted and latestOnly.
func (r *Registry) getSchemas(req *request) (any, error) {
	prefix := req.URL.Query().Get("subjectPrefix")
	keep := deletedFilter(req)
	out := []schemaJSON{}
	for _, name := range r.subjectNames() {
		if !strings.HasPrefix(name, prefix) || (req.ctx != "" && contextOf(name) != req.ctx) {
			continue
		}
		var vs []*version
		for _, v := range r.subjects[name].versions {
			if keep(v.deleted) {
				vs = append(vs, v)
			}
		}
		if flag(req, "latestOnly") && len(vs) > 0 {
			vs = vs[len(vs)-1:]
		}
		for _, v := range vs {
			out = append(out, r.versionJSON(req, name, v))
		}
	}
	return out, nil
}

// getSubjects: GET /subjects.
func (r *Registry) getSubjects(req *request) (any, error) {
	prefix := req.URL.Query().Get("subjectPrefix")
	out := []string{}
	for _, name := range r.subjectNames() {
		if !strings.HasPrefix(name, prefix) || (req.ctx != "" && contextOf(name) != req.ctx) {
			continue
		}
		if len(visible(req, r.subjects[name])) > 0 {
			out = append(out, name)
		}
	}
	return out, nil
}

// getContexts: GET /contexts.
func (r *Registry) getContexts(*request) (any, error) {
	out := []string{"."}
	for _, name := range r.subjectNames() {
		if c := contextOf(name); !slices.Contains(out, c) && len(r.subjects[name].versions) > 0 {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out, nil
}

// deleteContext: DELETE /contexts/{context}, an empty one.
func (r *Registry) deleteContext(req *request) (any, error) {
	for name, sub := range r.subjects {
		if contextOf(name) == req.ctx && len(sub.versions) > 0 {
			return nil, errf(http.StatusUnprocessableEntity, 42211, "Context '%s' is not empty", req.ctx)
		}
	}
	return nil, nil
}
