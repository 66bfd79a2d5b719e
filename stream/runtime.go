package stream

import (
	"sync/atomic"

	"github.com/brain4it/kafkabpl"
)

// Runtime runs the streams of one [kafkabpl.Library]: it starts them,
// answers their status and their stores' queries, and keeps the settings
// its streams share (the query endpoint they advertise, and how a query
// reaches another process). Its streams are handles of the Library, of
// kind [kafkabpl.Stream]: [kafkabpl.Library.Destroy] stops one, and
// [kafkabpl.Library.Close] stops them all. A Runtime is safe for
// concurrent use.
type Runtime struct {
	lib       *kafkabpl.Library
	endpoint  atomic.Pointer[string]         // the streams' default query endpoint; nil: none
	forwarder atomic.Pointer[StoreForwarder] // nil: store queries are not forwarded
	stateDir  atomic.Pointer[string]         // the streams' default "state-dir"; nil: none
}

// runtimeKey is the key of a Library's Runtime (see Of).
type runtimeKey struct{}

// Of returns the Runtime of lib's streams: the same one for every call
// with the same Library.
func Of(lib *kafkabpl.Library) *Runtime {
	return lib.Attached(runtimeKey{}, func() any { return &Runtime{lib: lib} }).(*Runtime)
}
