package server

import (
	"net/http"
	"time"
)

// The kinds of request an Observer is told of, one per call of
// brain4it's protocol (see [Server.ServeHTTP]).
const (
	RequestList     = "list"        // GET /: the modules
	RequestGet      = "get"         // GET /module, GET /module/path
	RequestPut      = "put"         // PUT: create a module, replace its scope, set an element
	RequestDelete   = "delete"      // DELETE: destroy a module, remove an element
	RequestEvaluate = "evaluate"    // POST /module: evaluate the body
	RequestExterior = "exterior"    // POST /module/@fn: call an exterior function
	RequestMonitor  = "monitor"     // POST with a monitor header: start a monitor stream, or end one
	RequestStore    = "store-query" // POST with a kafka-store-query header: a store query another process forwarded
	RequestNotify   = "peer-notify" // POST with a kafka-module-notify header: a module-notify another process forwarded
	RequestOptions  = "options"     // OPTIONS: a CORS preflight
	RequestOther    = "other"       // any other method, answered 405
)

// The kinds of evaluation an Observer is told of.
const (
	EvalEvaluate = "evaluate" // the body of POST /module
	EvalExterior = "exterior" // an exterior function called by POST /module/@fn
	EvalMonitor  = "monitor"  // a monitor stream's call of a function it watches
	EvalStart    = "start"    // the module's start code (Server.Start, module-start)
	EvalStop     = "stop"     // its stop code (Shutdown, module-stop, destroy)
)

// Observer is told what a Server does, for its metrics: package metrics'
// Metrics is one, which `kafkabpl serve --metrics` sets (Config.Observer).
// The kinds are the Request and Eval constants; module is the module's
// name, which the operator chose, so that a label of it stays bounded:
// never one that no module has (see ServeRequest).
//
// Hazard: its methods are called on the requests' goroutines, many at a
// time, and a request waits for them: they must be safe for concurrent
// use, and quick.
type Observer interface {
	// ServeRequest is told of each HTTP request as it arrives, with the
	// module its path names when that module exists then, "" otherwise
	// (GET /, a module that does not exist, a PUT that creates one).
	ServeRequest(module, kind string)
	// ServeRequestFailed is told of each request answered with an error
	// (a BPL exception, a refused access key, 405, 413, a panic), with
	// what ServeRequest was told of it. A monitor stream ended by its
	// client, the server or an unwatch is no failure.
	ServeRequestFailed(module, kind string)
	// ServeEvaluation is told of each evaluation once it ended: how long
	// it took, and its error (nil when it succeeded). A call of a path
	// that names no exterior function evaluates nothing, and is not
	// told.
	ServeEvaluation(module, kind string, took time.Duration, err error)
	// ServeMonitors is told that module's monitor streams being served
	// changed by delta: +1 when one starts, -1 when it ends.
	ServeMonitors(module string, delta int)
}

// requestKind is what an Observer is told of r: the module its path
// names when that exists, and the kind of request.
func (s *Server) requestKind(r *http.Request) (module, kind string) {
	t, _ := SplitPath(requestPath(r))
	if t.Module != "" && s.Module(t.Module) != nil {
		module = t.Module
	}
	switch r.Method {
	case http.MethodOptions:
		return module, RequestOptions
	case http.MethodGet:
		if t.Module == "" {
			return module, RequestList
		}
		return module, RequestGet
	case http.MethodPut:
		return module, RequestPut
	case http.MethodDelete:
		return module, RequestDelete
	case http.MethodPost:
		switch {
		case requestHeader(r, monitorKey) != "":
			return module, RequestMonitor
		case requestHeader(r, storeQueryKey) != "":
			return module, RequestStore
		case requestHeader(r, peerNotifyKey) != "":
			return module, RequestNotify
		case t.Path == "":
			return module, RequestEvaluate
		}
		return module, RequestExterior
	}
	return module, RequestOther
}

// evalStart is when an evaluation starts, for evaluated: the zero time
// when there is no Observer, which is the only reader of it.
func (s *Server) evalStart() time.Time {
	if s.cfg.Observer == nil {
		return time.Time{}
	}
	return time.Now()
}

// evaluated tells the observer, if any, of an evaluation of module's of
// kind that began at start and ended with err.
func (s *Server) evaluated(module, kind string, start time.Time, err error) {
	if o := s.cfg.Observer; o != nil {
		o.ServeEvaluation(module, kind, time.Since(start), err)
	}
}
