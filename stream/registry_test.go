package stream

import (
	"context"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
)

// userV1 is an Avro schema of a user, as the registry tests register it.
const userV1 = `{"type":"record","name":"User","namespace":"app","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"}]}`

// bplValue is the BPL value text reads as.
func bplValue(t testing.TB, text string) any { return must[[]any](t)(value.Parse(text))[0] }

// TestStreamWaitsForRegistry checks that a stream whose inputs need the
// schema registry waits while it is down, even with "on-error" skip: an
// input the registry cannot answer for is not a bad one, and none is
// skipped or lost; once the registry is back every input is processed.
func TestStreamWaitsForRegistry(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in", "out")).Servers()
	reg := testkit.NewFlakyRegistry(t)
	lib := streamLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL,
		"value-serializer": "Avro", "value-schema": userV1}))
	must[int](t)(lib.Send(ctx, p, []string{"in"}, []kafkabpl.Message{{Value: bplValue(t, `("name" => "a" "age" => 1)`)}}))
	reg.Set(testkit.RegistryDown) // before the stream has met the schema
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "s", "schema-registry-url": reg.URL,
		"value-deserializer": "Avro"}, Spec{From: []string{"in"}, To: "out", OnError: SkipOnError,
		Transform: func(_ context.Context, in *kafkabpl.Record) ([]Output, error) {
			if err := in.Err(); err != nil {
				return nil, err
			}
			name, _ := in.Value().(*value.List).Get("name")
			return []Output{{Message: kafkabpl.Message{Value: name}}}, nil
		}}))
	waitFor(t, "the stream to ask the registry while it is down", func() bool { return reg.Hits.Load() > 0 })
	// For the next few of its tries, it holds the input: nothing
	// processed, nothing skipped.
	for tries := reg.Hits.Load(); reg.Hits.Load() < tries+3; time.Sleep(50 * time.Millisecond) {
		if st := must[*Status](t)(Of(lib).Status(ctx, id)); st.Skipped != 0 || st.Processed != 0 || st.State != Running {
			t.Fatalf("while the registry is down: %+v, want nothing processed, nothing skipped, running", st)
		}
	}
	reg.Set(testkit.RegistryUp)
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 1 })
	if recs := readAll(t, lib, servers, 1, "out"); values(recs) != "a" {
		t.Errorf("outputs %q, want a", values(recs))
	}
	if st := must[*Status](t)(Of(lib).Status(ctx, id)); st.Skipped != 0 {
		t.Errorf("skipped %d inputs", st.Skipped)
	}
}
