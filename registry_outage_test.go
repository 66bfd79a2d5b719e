package kafkabpl

import (
	"errors"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
)

// The flaky registry of the outage tests: see [testkit.FlakyRegistry].
const (
	registryUp   = testkit.RegistryUp
	registryDown = testkit.RegistryDown
	registryHung = testkit.RegistryHung
)

func newFlakyRegistry(t *testing.T) *testkit.FlakyRegistry { return testkit.NewFlakyRegistry(t) }

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
	reg.Set(registryDown)
	if names := got(c, 1); len(names) != 1 || names[0] != "b" {
		t.Fatalf("a record of a cached schema while the registry is down: %v", names)
	}
	// "c", of a schema the consumer has not met, sent while the registry
	// works.
	p2 := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL,
		"value-serializer": "Avro", "value-schema": userV2}))
	reg.Set(registryUp)
	must[int](t)(lib.Send(ctx, p2, []string{"readings"}, []Message{{Value: bplValue(t, `("name" => "c" "age" => 2 "email" => null)`)}}))
	for _, mode := range []testkit.RegistryMode{registryDown, registryHung} {
		reg.Set(mode)
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
	if reg.Hits.Load() == 0 {
		t.Fatal("the registry was never asked while down: the test tests nothing")
	}

	// The consumer leaves while "c" is held back: nothing covered it, so
	// the group's next member reads it once the registry is back.
	must[bool](t)(lib.Destroy(ctx, c))
	reg.Set(registryUp)
	c2 := consumer()
	if names := got(c2, 1); len(names) != 1 || names[0] != "c" {
		t.Fatalf("after the outage, the next member got %v, want [c]", names)
	}
	// And it comes once: nothing more is there.
	if res := must[*Polled](t)(lib.Poll(ctx, c2, 300*time.Millisecond)); res.Len() != 0 {
		t.Errorf("more after the outage: %d records", res.Len())
	}
}

// TestSendToHungRegistry checks that a send whose registry never answers
// fails as a Timeout, after the registry's timeout, not as a
// SchemaRegistryError: the registry refused nothing.
func TestSendToHungRegistry(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	reg := newFlakyRegistry(t)
	reg.Set(registryHung)
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL,
		"value-serializer": "Avro", "value-schema": userV1, "request-timeout": 1000}))
	_, err := lib.Send(ctx, p, []string{"t"}, []Message{{Value: bplValue(t, `("name" => "a" "age" => 1)`)}})
	if ErrorType(err) != "Timeout" || !errors.Is(err, ErrRegistryUnavailable) {
		t.Errorf("send to a registry that never answers: %v (%s), want a Timeout of an unavailable registry", err, ErrorType(err))
	}
}
