package kafkabpl

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
)

// registryMode is what a flakyRegistry does with a request.
type registryMode int32

const (
	registryUp   registryMode = iota // passes it on
	registryDown                     // answers HTTP 503
	registryHung                     // never answers (until the client gives up)
)

// flakyRegistry is a schema registry in front of a fake one that can be
// taken down, or made to hang, and brought back.
type flakyRegistry struct {
	*httptest.Server
	mode atomic.Int32
	hits atomic.Int64 // requests answered while down or hung
}

func newFlakyRegistry(t *testing.T) *flakyRegistry {
	t.Helper()
	target := must[*url.URL](t)(url.Parse(newRegistryFake(t).URL()))
	proxy := httputil.NewSingleHostReverseProxy(target)
	f := &flakyRegistry{}
	stop := make(chan struct{}) // ends hung requests when the test ends
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch registryMode(f.mode.Load()) {
		case registryDown:
			f.hits.Add(1)
			http.Error(w, `{"error_code":50301,"message":"down for the test"}`, http.StatusServiceUnavailable)
		case registryHung:
			f.hits.Add(1)
			io.Copy(io.Discard, r.Body) // then the server sees the client go
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() {
		close(stop)
		f.Close()
	})
	return f
}

func (f *flakyRegistry) set(m registryMode) { f.mode.Store(int32(m)) }

// TestPollHoldsBackDuringRegistryOutage checks that records a consumer
// cannot read because the schema registry is down (HTTP 503) or hangs are
// neither returned as bad records nor committed past: the poll fails with
// SchemaRegistryError within its timeout, and once the registry answers
// again the same records come back, exactly once, to this consumer or,
// after it is gone, to the next member of its group.
func TestPollHoldsBackDuringRegistryOutage(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("readings")).Servers()
	reg := newFlakyRegistry(t)
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL,
		"value-serializer": "Avro", "value-schema": userV1}))
	consumer := func() string {
		return must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "schema-registry-url": reg.URL,
			"value-deserializer": "Avro", "group": "g", "topics": "readings", "auto-offset-reset": "earliest",
			"auto-commit-interval": 100, "request-timeout": 30000}))
	}
	send := func(names ...string) {
		msgs := make([]Message, len(names))
		for i, n := range names {
			msgs[i] = Message{Value: bplValue(t, `("name" => "`+n+`" "age" => 1)`)}
		}
		must[int](t)(lib.Send(ctx, p, []string{"readings"}, msgs))
	}
	// got polls c until it returns n records, failing on any poll error.
	got := func(c string, n int) []string {
		var names []string
		for deadline := time.Now().Add(20 * time.Second); len(names) < n && time.Now().Before(deadline); {
			res := must[*Polled](t)(lib.Poll(ctx, c, 500*time.Millisecond))
			for _, tr := range res.Topics {
				for _, r := range tr.Records {
					if err := r.Err(); err != nil {
						t.Fatalf("record %d: %v", r.Offset(), err)
					}
					v, _ := r.Value().(*value.List).Get("name")
					names = append(names, v.(string))
				}
			}
		}
		return names
	}

	c := consumer()
	send("a")
	if names := got(c, 1); len(names) != 1 || names[0] != "a" {
		t.Fatalf("before the outage: %v", names)
	}

	// The schema is cached now: a new one is sent while the registry
	// works, then read while it does not.
	send("b")
	reg.set(registryDown)
	if names := got(c, 1); len(names) != 1 || names[0] != "b" {
		t.Fatalf("a record of a cached schema while the registry is down: %v", names)
	}
	// "c", of a schema the consumer has not met, sent while the registry
	// works.
	p2 := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL,
		"value-serializer": "Avro", "value-schema": userV2}))
	reg.set(registryUp)
	must[int](t)(lib.Send(ctx, p2, []string{"readings"}, []Message{{Value: bplValue(t, `("name" => "c" "age" => 2 "email" => null)`)}}))
	for _, mode := range []registryMode{registryDown, registryHung} {
		reg.set(mode)
		start := time.Now()
		res, err := lib.Poll(ctx, c, time.Second)
		took := time.Since(start)
		if !errors.Is(err, ErrSchemaRegistry) || !errors.Is(err, ErrRegistryUnavailable) || ErrorType(err) != "SchemaRegistryError" {
			t.Errorf("mode %d: poll: %v (%s) %v, want a SchemaRegistryError holding the record back", mode, res, ErrorType(err), err)
		}
		// The registry's request-timeout is 30 s: a poll of a second ends
		// near its second, whatever the registry does.
		if took > 15*time.Second {
			t.Errorf("mode %d: the poll of a second took %v", mode, took)
		}
	}
	if reg.hits.Load() == 0 {
		t.Fatal("the registry was never asked while down: the test tests nothing")
	}

	// The consumer leaves while "c" is held back: nothing covered it, so
	// the group's next member reads it once the registry is back.
	must[bool](t)(lib.Destroy(ctx, c))
	reg.set(registryUp)
	c2 := consumer()
	if names := got(c2, 1); len(names) != 1 || names[0] != "c" {
		t.Fatalf("after the outage, the next member got %v, want [c]", names)
	}
	// And it comes once: nothing more is there.
	if res := must[*Polled](t)(lib.Poll(ctx, c2, 300*time.Millisecond)); res.Len() != 0 {
		t.Errorf("more after the outage: %d records", res.Len())
	}
}

// TestStreamWaitsForRegistry checks that a stream whose inputs need the
// schema registry waits while it is down, even with "on-error" skip: an
// input the registry cannot answer for is not a bad one, and none is
// skipped or lost; once the registry is back every input is processed.
func TestStreamWaitsForRegistry(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in", "out")).Servers()
	reg := newFlakyRegistry(t)
	lib := streamLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL,
		"value-serializer": "Avro", "value-schema": userV1}))
	must[int](t)(lib.Send(ctx, p, []string{"in"}, []Message{{Value: bplValue(t, `("name" => "a" "age" => 1)`)}}))
	reg.set(registryDown) // before the stream has met the schema
	id := must[string](t)(lib.Stream(ctx, map[string]any{"servers": servers, "group": "s", "schema-registry-url": reg.URL,
		"value-deserializer": "Avro"}, StreamSpec{From: []string{"in"}, To: "out", OnError: SkipOnError,
		Transform: func(_ context.Context, in *Record) ([]StreamOutput, error) {
			if err := in.Err(); err != nil {
				return nil, err
			}
			name, _ := in.Value().(*value.List).Get("name")
			return []StreamOutput{{Message: Message{Value: name}}}, nil
		}}))
	waitFor(t, "the stream to ask the registry while it is down", func() bool { return reg.hits.Load() > 0 })
	// For the next few of its tries, it holds the input: nothing
	// processed, nothing skipped.
	for tries := reg.hits.Load(); reg.hits.Load() < tries+3; time.Sleep(50 * time.Millisecond) {
		if st := must[*StreamStatus](t)(lib.StreamStatus(ctx, id)); st.Skipped != 0 || st.Processed != 0 || st.State != StreamRunning {
			t.Fatalf("while the registry is down: %+v, want nothing processed, nothing skipped, running", st)
		}
	}
	reg.set(registryUp)
	waitStream(t, lib, id, func(st *StreamStatus) bool { return st.Processed == 1 })
	if recs := readAll(t, lib, servers, 1, "out"); values(recs) != "a" {
		t.Errorf("outputs %q, want a", values(recs))
	}
	if st := must[*StreamStatus](t)(lib.StreamStatus(ctx, id)); st.Skipped != 0 {
		t.Errorf("skipped %d inputs", st.Skipped)
	}
}

// TestSendToHungRegistry checks that a send whose registry never answers
// fails as a Timeout, after the registry's timeout, not as a
// SchemaRegistryError: the registry refused nothing.
func TestSendToHungRegistry(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	reg := newFlakyRegistry(t)
	reg.set(registryHung)
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL,
		"value-serializer": "Avro", "value-schema": userV1, "request-timeout": 1000}))
	_, err := lib.Send(ctx, p, []string{"t"}, []Message{{Value: bplValue(t, `("name" => "a" "age" => 1)`)}})
	if ErrorType(err) != "Timeout" || !errors.Is(err, ErrRegistryUnavailable) {
		t.Errorf("send to a registry that never answers: %v (%s), want a Timeout of an unavailable registry", err, ErrorType(err))
	}
}
