package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/value"
)

// The headers of brain4it's protocol.
const (
	AccessKeyHeader  = "access-key"
	MonitorHeader    = "monitor"
	SessionIDHeader  = "session-id"
	ServerTimeHeader = "server-time"
	bplContentType   = "text/plain; charset=UTF-8"
)

// ErrSecurity is wrapped by the error of a request whose access key does
// not allow it; it answers brain4it's SecurityException.
var ErrSecurity = errors.New("Operation not authorized.")

// ErrBodyTooLarge is wrapped by the error of a request whose body is
// longer than Config.MaxBody; it answers 413.
var ErrBodyTooLarge = errors.New("server: request body too large")

// ServeHTTP answers brain4it's HTTP protocol, as its HttpDispatcher does:
//
//   - GET / lists the modules, each its name or (name metadata) when it
//     has a module-metadata list; GET /module gives its scope, GET
//     /module/path the element path names (see ParsePath:
//     rules/2/predicate, "quoted names" allowed, URL-decoded);
//   - PUT /module creates the module (empty body) or replaces its scope
//     (a list body); PUT /module/path sets the element and gives the old
//     value; DELETE /module destroys it, DELETE /module/path removes the
//     element;
//   - POST /module evaluates the body (capped at Config.MaxEvalTime);
//     POST /module/@fn calls the exterior function with brain4it's ctx
//     list and the body, and the content-type the function puts in
//     ctx/response-headers selects the output: BPL (the default), JSON
//     (application/json), XML (text/xml) or text (anything else);
//   - POST with a monitor: N header and a list of exterior function
//     names as body starts a monitor stream (see monitor.go); with a
//     session id string as body it ends that stream;
//   - OPTIONS answers the CORS preflight.
//
// Every answer allows any origin and exposes the server-time header, which
// every result carries. Errors are 500 with the BPL exception list, such
// as ("SecurityException" "message" => "Operation not authorized.") for a
// wrong access-key header; a body over Config.MaxBody gets 413; another
// method 405. A panic in a request is recovered and answered 500.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["access-control-allow-origin"] = anyOriginValue
	h["access-control-expose-headers"] = exposeValue
	rw := &recorder{ResponseWriter: w}
	obs := s.cfg.Observer
	var module, kind string
	if obs != nil {
		module, kind = s.requestKind(r)
		obs.ServeRequest(module, kind)
	}
	defer func() {
		if p := recover(); p != nil {
			s.logf("panic in %s %s: %v", r.Method, r.URL.Path, p)
			if !rw.wrote {
				s.sendError(rw, nil, fmt.Errorf("internal error: %v", p))
			}
			if obs != nil {
				obs.ServeRequestFailed(module, kind)
			}
		}
	}()
	var err error
	switch r.Method {
	case http.MethodOptions:
		setHeader(h, "allow", "GET,PUT,DELETE,POST,OPTIONS")
		setHeader(h, "access-control-allow-methods", "GET,PUT,DELETE,POST,OPTIONS")
		setHeader(h, "access-control-allow-headers", AccessKeyHeader+","+MonitorHeader+","+SessionIDHeader)
		rw.WriteHeader(http.StatusOK)
		return
	case http.MethodGet:
		err = s.get(rw, r)
	case http.MethodPut:
		err = s.put(rw, r)
	case http.MethodDelete:
		err = s.delete(rw, r)
	case http.MethodPost:
		err = s.post(rw, r)
	default:
		rw.WriteHeader(http.StatusMethodNotAllowed)
		if obs != nil {
			obs.ServeRequestFailed(module, kind)
		}
		return
	}
	if err != nil && obs != nil {
		obs.ServeRequestFailed(module, kind)
	}
	if err != nil && !rw.wrote {
		s.sendError(rw, s.Module(moduleOf(r)), err)
	}
}

// recorder notes whether the answer has begun.
type recorder struct {
	http.ResponseWriter
	wrote bool
}

func (r *recorder) WriteHeader(code int) { r.wrote = true; r.ResponseWriter.WriteHeader(code) }
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}
func (r *recorder) Flush() {
	r.wrote = true
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// requestPath is the request's path decoded as brain4it's standalone
// server decodes it (Java's URLDecoder): %XX escapes and + for a space,
// which brain4it's Java client writes for one.
func requestPath(r *http.Request) string {
	p, err := url.QueryUnescape(r.URL.EscapedPath())
	if err != nil {
		return r.URL.Path
	}
	return p
}

func moduleOf(r *http.Request) string {
	t, _ := SplitPath(requestPath(r))
	return t.Module
}

// checkAccess is brain4it's checkSecurity, but closed by default: without
// a server key anything is allowed; the server key allows anything; a
// module's own access-key allows that module; anything else is a
// SecurityException. brain4it leaves a module with no access-key open to
// anyone even when the server has a key, so that a module saved on a
// laptop and loaded by a server listening beyond loopback (--listen, which
// requires a key) would be open to the network; here it needs the server
// key.
func (s *Server) checkAccess(t Target, key string) error {
	if s.cfg.AccessKey == "" || s.cfg.AccessKey == key {
		return nil
	}
	if t.Module != "" {
		if m := s.Module(t.Module); m != nil {
			v, _ := m.Interp().Global(AccessKeyVar)
			if v == nil {
				return ErrSecurity
			}
			if text, ok := v.(string); ok && text == key {
				return nil
			}
			if _, ok := v.(string); !ok && value.Format(v) == key {
				return nil
			}
		}
	}
	return ErrSecurity
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) error {
	t, err := SplitPath(requestPath(r))
	if err != nil {
		return err
	}
	if t.Module == "" {
		return s.sendResult(w, r.Context(), nil, s.listModules(), nil)
	}
	if t.Path != MetadataVar {
		if err := s.checkAccess(t, requestHeader(r, accessKeyKey)); err != nil {
			return err
		}
	}
	m, err := s.getModule(t.Module)
	if err != nil {
		return err
	}
	if t.Parts == nil {
		text, err := m.Interp().FormatScope(r.Context())
		if err != nil {
			return err
		}
		return writeText(w, bplContentType, text)
	}
	v, err := m.Interp().GetPath(r.Context(), t.Parts)
	if err != nil {
		return err
	}
	return s.sendResult(w, r.Context(), m, v, nil)
}

// listModules is GET /'s list.
func (s *Server) listModules() *value.List {
	l := &value.List{}
	for _, m := range s.Modules() {
		if md, ok := m.Interp().Global(MetadataVar); ok {
			if mdl, ok := md.(*value.List); ok {
				l.Append(value.NewList(m.name, mdl))
				continue
			}
		}
		l.Append(m.name)
	}
	return l
}

func (s *Server) put(w http.ResponseWriter, r *http.Request) error {
	t, err := SplitPath(requestPath(r))
	if err != nil {
		return err
	}
	key := requestHeader(r, accessKeyKey)
	if err := s.checkAccess(t, key); err != nil {
		return err
	}
	data, err := s.readData(w, r)
	if err != nil {
		return err
	}
	if t.Module == "" {
		return s.sendResult(w, r.Context(), nil, nil, nil)
	}
	if t.Parts == nil {
		scope, _ := data.(*value.List)
		var result string
		m := s.Module(t.Module)
		if m == nil {
			if m, err = s.CreateModule(r.Context(), t.Module, scope); err != nil {
				return err
			}
			result = "Module " + t.Module + " created."
		} else {
			if scope == nil {
				// brain4it's RestService words it so, as an Exception:
				// the manager's "create module" met an existing one
				return moduleError("Exception", "Module "+t.Module+" already exists.")
			}
			m.Init(scope)
			result = "Module " + t.Module + " modified."
		}
		if key != "" {
			m.Interp().SetGlobal(AccessKeyVar, key)
		}
		return s.sendResult(w, r.Context(), nil, result, nil)
	}
	m, err := s.getModule(t.Module)
	if err != nil {
		return err
	}
	old, err := m.Interp().PutPath(r.Context(), t.Parts, m.importValue(data))
	if err != nil {
		return err
	}
	return s.sendResult(w, r.Context(), m, old, nil)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) error {
	t, err := SplitPath(requestPath(r))
	if err != nil {
		return err
	}
	if err := s.checkAccess(t, requestHeader(r, accessKeyKey)); err != nil {
		return err
	}
	if t.Module == "" {
		return s.sendResult(w, r.Context(), nil, nil, nil)
	}
	if t.Parts == nil {
		if err := s.DestroyModule(r.Context(), t.Module); err != nil {
			return err
		}
		return s.sendResult(w, r.Context(), nil, "Module "+t.Module+" destroyed.", nil)
	}
	m, err := s.getModule(t.Module)
	if err != nil {
		return err
	}
	old, err := m.Interp().DeletePath(r.Context(), t.Parts)
	if err != nil {
		return err
	}
	return s.sendResult(w, r.Context(), m, old, nil)
}

func (s *Server) post(w http.ResponseWriter, r *http.Request) error {
	t, err := SplitPath(requestPath(r))
	if err != nil {
		return err
	}
	if requestHeader(r, storeQueryKey) != "" {
		return s.storeQuery(w, r, t) // store_query.go
	}
	if requestHeader(r, peerNotifyKey) != "" {
		return s.peerNotify(w, r, t) // peer_notify.go
	}
	monitor := requestHeader(r, monitorKey)
	if monitor == "" {
		if t.Module == "" {
			if _, err := s.readAll(w, r); err != nil {
				return err
			}
			return s.sendResult(w, r.Context(), nil, nil, nil)
		}
		m, err := s.getModule(t.Module)
		if err != nil {
			return err
		}
		if t.Path == "" {
			if err := s.checkAccess(t, requestHeader(r, accessKeyKey)); err != nil {
				return err
			}
			body, err := s.readAll(w, r)
			if err != nil {
				return err
			}
			var v any
			start := s.evalStart()
			if isBPL(r) {
				v, err = m.EvalText(r.Context(), body)
			} else {
				v, err = m.Eval(r.Context(), body)
			}
			s.evaluated(m.name, EvalEvaluate, start, err)
			if err != nil {
				return err
			}
			// no request context: code evaluated so never sees one,
			// so it cannot name a content type
			return s.sendResult(w, r.Context(), m, v, nil)
		}
		reqCtx := s.contextList(r)
		data, err := s.readData(w, r)
		if err != nil {
			return err
		}
		start := s.evalStart()
		v, err := m.callExterior(r.Context(), t.Path, t.Parts, reqCtx, data)
		if errors.Is(err, ErrNotExterior) {
			v, err = nil, nil // brain4it answers null
		} else {
			s.evaluated(m.name, EvalExterior, start, err)
		}
		if err != nil {
			return stripSource(err)
		}
		return s.sendResult(w, r.Context(), m, v, reqCtx)
	}
	data, err := s.readData(w, r)
	if err != nil {
		return err
	}
	switch data := data.(type) {
	case *value.List:
		interval, err := strconv.ParseInt(monitor, 10, 32)
		if err != nil {
			// brain4it reads it with Java's Integer.parseInt, 32 bits
			return &javaError{typ: "NumberFormatException", msg: `For input string: "` + monitor + `"`}
		}
		m, err := s.getModule(t.Module)
		if err != nil {
			return err
		}
		return s.watch(w, r, m, data, int(interval))
	case string:
		return s.sendResult(w, r.Context(), nil, s.unwatch(data), nil)
	}
	return &javaError{typ: "IOException", msg: "Invalid monitor service argument"}
}

// isBPL reports whether the body is BPL text: no content type, or
// text/plain, as brain4it's readData decides.
func isBPL(r *http.Request) bool {
	ct := requestHeader(r, "Content-Type")
	return ct == "" || strings.HasPrefix(ct, "text/plain")
}

// readAll reads the body, bounded by MaxBody.
func (s *Server) readAll(w http.ResponseWriter, r *http.Request) (string, error) {
	if n := r.ContentLength; n >= 0 && n <= s.cfg.MaxBody {
		return readKnown(r.Body, n) // wire.go
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return "", fmt.Errorf("%w: over %d bytes", ErrBodyTooLarge, mbe.Limit)
	}
	if err != nil {
		return "", fmt.Errorf("reading the request body: %w", err)
	}
	return string(b), nil
}

// readData reads the body as brain4it's readData does: BPL text is read
// (its first value; null when empty), anything else is a string.
func (s *Server) readData(w http.ResponseWriter, r *http.Request) (any, error) {
	body, err := s.readAll(w, r)
	if err != nil || !isBPL(r) {
		return body, err
	}
	vs, err := value.Parse(body)
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	return vs[0], nil
}

// sendResult writes a result: BPL text unless reqCtx's response-headers
// name another content-type (application/json, text/xml or other text).
func (s *Server) sendResult(w http.ResponseWriter, ctx context.Context, m *Module, v any, reqCtx *value.List) error {
	ct := ""
	if reqCtx != nil {
		if rh, ok := reqCtx.Get("response-headers"); ok {
			if rhl, ok := rh.(*value.List); ok {
				if c, ok := rhl.Get("content-type"); ok {
					ct, _ = c.(string)
				}
			}
		}
	}
	var in *bpl.Interp
	if m != nil {
		in = m.Interp()
	} else {
		in = bpl.New(nil)
	}
	switch {
	case ct == "" || strings.HasPrefix(ct, "text/plain"):
		if n, ok := v.(int64); ok {
			// value.Format's text of an integer, without its builder
			return writeText(w, bplContentType, strconv.FormatInt(n, 10))
		}
		text, err := in.FormatValue(ctx, v)
		if err != nil {
			return err
		}
		return writeText(w, bplContentType, text)
	case strings.HasPrefix(ct, "application/json"):
		if str, ok := v.(string); ok {
			return writeText(w, "application/json; charset=UTF-8", str)
		}
		text, err := in.FormatJSON(v)
		if err != nil {
			return err
		}
		return writeText(w, "application/json; charset=UTF-8", text)
	case strings.HasPrefix(ct, "text/xml"):
		if str, ok := v.(string); ok {
			return writeText(w, "text/xml; charset=UTF-8", str)
		}
		text, err := formatXML(v)
		if err != nil {
			return err
		}
		return writeText(w, "text/xml; charset=UTF-8", text)
	}
	if str, ok := v.(string); ok {
		return writeText(w, ct, str)
	}
	text, err := in.FormatValue(ctx, v)
	if err != nil {
		return err
	}
	return writeText(w, ct, text)
}

func writeText(w http.ResponseWriter, ct, text string) error {
	h := w.Header()
	h[ServerTimeHeader] = serverTime()
	if ct == bplContentType {
		h["Content-Type"] = bplTypeValue
	} else {
		h.Set("Content-Type", ct)
	}
	h["Content-Length"] = []string{strconv.Itoa(len(text))}
	w.WriteHeader(http.StatusOK)
	_, err := io.WriteString(w, text)
	return err
}

// setHeader sets the header name exactly as spelt, lowercase as brain4it's
// server writes its own headers, where h.Set would write Server-Time. HTTP
// names are case-insensitive, but Java's HttpURLConnection.getHeaderFields
// answers a case-sensitive map, and brain4it's desktop and Android
// managers (FunctionInvoker) look server-time up in it: with the canonical
// spelling their dashboards never see the server's time. Content-Type and
// Content-Length stay canonical, since net/http looks for them so.
func setHeader(h http.Header, name, value string) {
	h[name] = []string{value}
}

// sendError answers 500 with the exception list (413 for a body too large).
func (s *Server) sendError(w http.ResponseWriter, m *Module, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, ErrBodyTooLarge) {
		code = http.StatusRequestEntityTooLarge
	}
	text := value.Format(ExceptionList(err))
	h := w.Header()
	h[ServerTimeHeader] = serverTime()
	h["Content-Type"] = bplTypeValue
	h.Set("Content-Length", strconv.Itoa(len(text)))
	w.WriteHeader(code)
	io.WriteString(w, text)
}

// ExceptionList is err as brain4it's exception list, ("Type" "message" =>
// m): a BPL exception's own list; for the server's errors, the type and
// message brain4it's server gives (SecurityException, ParseException,
// InvalidReference, IOException "Module m not found." and the like), or
// an IOException for those it has none of.
func ExceptionList(err error) *value.List {
	var ex *bpl.Exception
	var syn *value.SyntaxError
	var pe *PathError
	var je *javaError
	typ, msg := "Exception", err.Error()
	switch {
	case errors.As(err, &pe):
		typ, msg = "InvalidReference", pe.message()
	case errors.As(err, &ex):
		if ex.Value != nil {
			return withCode(ex)
		}
		typ, msg = ex.Type, ex.Message
	case errors.As(err, &syn):
		typ = "ParseException"
	case errors.Is(err, ErrSecurity):
		typ = "SecurityException"
	case errors.As(err, &je):
		typ, msg = je.typ, je.msg
	case errors.Is(err, ErrModule), errors.Is(err, ErrInvalidPath), errors.Is(err, ErrBodyTooLarge), errors.Is(err, ErrNoSnapshot), errors.Is(err, ErrShutdown):
		typ = "IOException"
		msg = strings.TrimPrefix(msg, "server: ")
	case errors.Is(err, bpl.ErrPath):
		typ = "InvalidReference"
	default:
		if t := value.ErrorType(err); t != "KafkaError" {
			typ = t
		}
	}
	return value.NewList(typ).AppendNamed("message", msg)
}

// withCode is the exception's list with a "code" element naming the
// innermost call that raised it, as brain4it's server answers a failed
// evaluation: ("boom" "code" => (throw "boom")). The list is a copy; one
// that has a code of its own (a thrown exception value) is kept as it is.
func withCode(ex *bpl.Exception) *value.List {
	if ex.Code == nil {
		return ex.Value
	}
	if _, ok := ex.Value.Get("code"); ok {
		return ex.Value
	}
	l := &value.List{}
	for name, v := range ex.Value.All() {
		if name == "" {
			l.Append(v)
		} else {
			l.AppendNamed(name, v)
		}
	}
	return l.AppendNamed("code", ex.Code)
}

// stripSource drops where an exterior function's exception was raised, as
// brain4it's removeSourceInfo does: exterior callers are not trusted. The
// exception's other elements stay.
func stripSource(err error) error {
	var ex *bpl.Exception
	if !errors.As(err, &ex) {
		return err
	}
	l := &value.List{}
	for name, v := range ex.Value.All() {
		switch name {
		case "":
			l.Append(v)
		case "code", "stack":
		default:
			l.AppendNamed(name, v)
		}
	}
	if l.Len() == 0 {
		l = value.NewList(ex.Type).AppendNamed("message", ex.Message)
	}
	return &bpl.Exception{Type: ex.Type, Message: ex.Message, Value: l}
}
