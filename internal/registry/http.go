package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// request is what a handler is given: the HTTP request, its body, and the
// context its path named.
type request struct {
	*http.Request
	body   []byte
	ctx    string // "" outside /contexts/{ctx}/...
	replay *entry // the journal's entry being replayed; nil when serving
}

type handler func(r *Registry, req *request) (any, error)

// rawText is a response written as it is, not as JSON.
type rawText string

func (r *Registry) routes() {
	r.mux = http.NewServeMux()
	for pattern, h := range map[string]handler{
		"GET /{$}":                                                  func(*Registry, *request) (any, error) { return map[string]any{}, nil },
		"GET /schemas/types":                                        func(*Registry, *request) (any, error) { return schemaTypes, nil },
		"GET /schemas":                                              (*Registry).getSchemas,
		"GET /schemas/ids/{id}":                                     (*Registry).getSchemaByID,
		"GET /schemas/ids/{id}/schema":                              (*Registry).getRawSchemaByID,
		"GET /schemas/ids/{id}/subjects":                            (*Registry).getSubjectsByID,
		"GET /schemas/ids/{id}/versions":                            (*Registry).getVersionsByID,
		"GET /schemas/guids/{guid}":                                 (*Registry).getSchemaByGUID,
		"GET /schemas/guids/{guid}/ids":                             (*Registry).getIDsByGUID,
		"GET /subjects":                                             (*Registry).getSubjects,
		"GET /subjects/{subject}/versions":                          (*Registry).getVersions,
		"POST /subjects/{subject}/versions":                         (*Registry).register,
		"POST /subjects/{subject}":                                  (*Registry).lookup,
		"DELETE /subjects/{subject}":                                (*Registry).deleteSubject,
		"GET /subjects/{subject}/metadata":                          (*Registry).getByMetadata,
		"GET /subjects/{subject}/versions/{version}":                (*Registry).getVersion,
		"GET /subjects/{subject}/versions/{version}/schema":         (*Registry).getRawVersion,
		"GET /subjects/{subject}/versions/{version}/referencedby":   (*Registry).getReferencedBy,
		"DELETE /subjects/{subject}/versions/{version}":             (*Registry).deleteVersion,
		"POST /compatibility/subjects/{subject}/versions/{version}": (*Registry).compatibility,
		"POST /compatibility/subjects/{subject}/versions":           (*Registry).compatibility,
		"GET /config":                                               (*Registry).getConfig,
		"PUT /config":                                               (*Registry).putConfig,
		"DELETE /config":                                            (*Registry).deleteConfig,
		"GET /config/{subject}":                                     (*Registry).getConfig,
		"PUT /config/{subject}":                                     (*Registry).putConfig,
		"DELETE /config/{subject}":                                  (*Registry).deleteConfig,
		"GET /mode":                                                 (*Registry).getMode,
		"PUT /mode":                                                 (*Registry).putMode,
		"DELETE /mode":                                              (*Registry).deleteMode,
		"GET /mode/{subject}":                                       (*Registry).getMode,
		"PUT /mode/{subject}":                                       (*Registry).putMode,
		"DELETE /mode/{subject}":                                    (*Registry).deleteMode,
		"GET /contexts":                                             (*Registry).getContexts,
	} {
		r.mux.Handle(pattern, r.wrap(h))
	}
}

// wrap serves a handler: one request at a time, its answer as JSON.
func (r *Registry) wrap(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody+1))
		if err != nil || len(body) > maxBody {
			writeJSON(w, http.StatusRequestEntityTooLarge, errorBody(errf(http.StatusRequestEntityTooLarge, 42209, "the request body is too large or unreadable")))
			return
		}
		req := &request{Request: hr, body: body, ctx: ctxOf(hr)}
		if e, ok := hr.Context().Value(replayKey{}).(*entry); ok {
			req.replay = e
		}
		r.mu.Lock()
		out, err := h(r, req)
		r.mu.Unlock()
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				ae = errf(http.StatusInternalServerError, codeStore, "%s", err.Error())
			}
			writeJSON(w, ae.status, errorBody(ae))
			return
		}
		if s, ok := out.(rawText); ok {
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, string(s))
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// maxBody bounds a request's body: a schema of up to 4 MiB, JSON-quoted.
const maxBody = 8 << 20

type replayKey struct{}
type ctxKey struct{}

func ctxOf(hr *http.Request) string {
	c, _ := hr.Context().Value(ctxKey{}).(string)
	return c
}

func errorBody(e *apiError) map[string]any {
	return map[string]any{"error_code": e.code, "message": e.msg}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// ServeHTTP answers Confluent's REST API; a path under
// /contexts/{context}/ is served within that context.
func (r *Registry) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	if rest, ok := strings.CutPrefix(hr.URL.Path, "/contexts/"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			hr2 := hr.Clone(contextWith(hr, ctxKey{}, rest[:i]))
			hr2.URL.Path = rest[i:]
			hr2.URL.RawPath = ""
			hr = hr2
		} else if hr.Method == http.MethodDelete {
			r.wrap((*Registry).deleteContext).ServeHTTP(w, hr.WithContext(contextWith(hr, ctxKey{}, rest)))
			return
		}
	}
	r.mux.ServeHTTP(w, hr)
}

// query helpers

func flag(req *request, name string) bool {
	v, _ := strconv.ParseBool(req.URL.Query().Get(name))
	return v
}

// deletedFilter tells which versions a listing includes: live ones, and
// with deleted=true soft-deleted ones too, or with deletedOnly=true only
// those.
func deletedFilter(req *request) func(deleted bool) bool {
	switch {
	case flag(req, "deletedOnly"):
		return func(d bool) bool { return d }
	case flag(req, "deleted"):
		return func(bool) bool { return true }
	}
	return func(d bool) bool { return !d }
}

// subjectOf is the path's subject, qualified with the request's context.
func subjectOf(req *request) string {
	return qualify(req.ctx, req.PathValue("subject"))
}

// versionOf parses a version: 1 to 2^31-1, or "latest" (or -1): 0.
func versionOf(s string) (int, error) {
	if s == "latest" || s == "-1" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, errInvalidVersion(s)
	}
	return n, nil
}
