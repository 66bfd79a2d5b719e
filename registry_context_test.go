package kafkabpl

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// The caller's context reaches the schema registry: a Send's directly, a
// poll's through the schemas it resolves before its records are decoded.

// TestSendRegistryContext: a Send whose schema registry accepts
// connections and never answers returns when the caller's context ends,
// long before the registry's timeout (request-timeout, at most 10 s),
// with a Timeout error wrapping the context's deadline: the registry did
// not fail, the caller stopped waiting.
func TestSendRegistryContext(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{}) // a request waits for the test's end, never answered
	silent := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer silent.Close()
	defer close(hang)
	lib := newLib(t)
	p := must[string](t)(lib.Create(testCtx(t), Producer, map[string]any{"servers": newCluster(t).Servers(), "schema-registry-url": silent.URL,
		"value-serializer": "Avro", "value-schema": userV1, "request-timeout": 30000}))
	ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := lib.Send(ctx, p, []string{"t"}, []Message{{Value: bplValue(t, `("name" => "a" "age" => 1)`)}})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Send took %v, past its context's 300 ms", d)
	}
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrSchemaRegistry) || ErrorType(err) != "Timeout" {
		t.Errorf("Send to a silent registry: %v (type %s), want a Timeout wrapping the context's deadline, not the registry's failure", err, ErrorType(err))
	}
}

// TestPollPreparesSchemas: a poll asks the registry for its records'
// schemas within its own context, so that their Err, Key and Value, which
// take no context, decode without the registry: here it is gone by then.
func TestPollPreparesSchemas(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	fake := srfake.New()
	defer fake.Close()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": fake.URL(),
		"key-serializer": "Avro", "key-schema": `"string"`, "value-serializer": "Avro", "value-schema": userV1}))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "schema-registry-url": fake.URL(),
		"key-deserializer": "Avro", "value-deserializer": "Avro", "auto-offset-reset": "earliest"}))
	must[int](t)(lib.Send(ctx, p, []string{"prep"}, []Message{{Key: "k1", Value: bplValue(t, `("name" => "ann" "age" => 31)`)}, {Key: "k2", Value: bplValue(t, `("name" => "bob" "age" => 7)`)}}))
	recs := pollRecords(t, lib, c, "prep", 2)
	fake.Close()
	for i, want := range []string{`"k1" ("name" => "ann" "age" => 31)`, `"k2" ("name" => "bob" "age" => 7)`} {
		if err := recs[i].Err(); err != nil {
			t.Fatalf("record %d, the registry gone: %v", i, err)
		}
		if got := value.Format(recs[i].Key()) + " " + value.Format(recs[i].Value()); got != want {
			t.Errorf("record %d = %s, want %s", i, got, want)
		}
	}
}
