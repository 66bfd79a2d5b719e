package kafkabpl

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// handleConfig returns the parsed config of a live handle.
func handleConfig(t *testing.T, lib *Library, id string) *config {
	t.Helper()
	h, err := lib.acquire(id, kindOfID(id))
	if err != nil {
		t.Fatal(err)
	}
	defer h.calls.Done()
	return h.cfg
}

// brain4it returns the config of brain4it's kafka-consumer and
// kafka-producer: servers, and keys as named arguments (name, value, ...).
func brain4it(servers string, keys ...any) Config {
	l := &value.List{}
	for i := 0; i < len(keys); i += 2 {
		l.AppendNamed(keys[i].(string), keys[i+1])
	}
	return Config{Base: servers, Keys: l, Brain4it: true}
}

// TestBrain4itDefaults checks that a config read as brain4it's
// kafka-consumer reads it has the consumer defaults of brain4it's Java
// library, and kafka-create's Kafka's.
func TestBrain4itDefaults(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	ctx := testCtx(t)
	servers := "127.0.0.1:1" // nothing is dialed
	b4 := handleConfig(t, lib, must[string](t)(lib.Create(ctx, Consumer, brain4it(servers))))
	kc := handleConfig(t, lib, must[string](t)(lib.Create(ctx, Consumer, servers)))
	for _, tt := range []struct {
		name           string
		brain4it, kafk any
		b4got, kgot    any
	}{
		{"enable-auto-commit", false, true, b4.autoCommit, kc.autoCommit},
		{"max-poll-records", 10, 500, b4.maxPollRecords, kc.maxPollRecords},
		{"session-timeout", 10 * time.Second, 45 * time.Second, b4.sessionTimeout, kc.sessionTimeout},
		{"auto-commit-interval", 5 * time.Second, 5 * time.Second, b4.autoCommitInterval, kc.autoCommitInterval},
		{"heartbeat-interval", 3 * time.Second, 3 * time.Second, b4.heartbeatInterval, kc.heartbeatInterval},
		{"max-poll-interval", 5 * time.Minute, 5 * time.Minute, b4.maxPollInterval, kc.maxPollInterval},
		{"auto-offset-reset", resetLatest, resetLatest, b4.autoOffsetReset, kc.autoOffsetReset},
	} {
		if tt.b4got != tt.brain4it || tt.kgot != tt.kafk {
			t.Errorf("%s: kafka-consumer %v, kafka-create %v; want %v and %v", tt.name, tt.b4got, tt.kgot, tt.brain4it, tt.kafk)
		}
	}
	if !strings.HasPrefix(b4.group, "kafkabpl-") {
		t.Errorf("kafka-consumer's group %q is not a fresh one", b4.group)
	}
	// A named argument still overrides the default.
	on := handleConfig(t, lib, must[string](t)(lib.Create(ctx, Consumer, brain4it(servers, "enable-auto-commit", true))))
	if !on.autoCommit {
		t.Error(`"enable-auto-commit" => true did not turn auto-commit on`)
	}
}

// TestBrain4itReplay is what brain4it's defaults are for: a consumer that
// polls, never commits and is deleted leaves its group's offsets where they
// were, so the next consumer of the group reads the same messages again.
func TestBrain4itReplay(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, brain4it(servers)))
	send(t, lib, p, []string{"replay"}, unkeyed("a", "b", "c")...)
	for i := range 2 {
		c := must[string](t)(lib.Create(ctx, Consumer, brain4it(servers, "group-id", "replay-g", "auto-offset-reset", "earliest")))
		must[[]string](t)(lib.Subscribe(ctx, c, []string{"replay"}))
		got := pollUntil(t, lib, c, nil, 3)["replay"]
		if value.Format(got) != `("a" "b" "c")` {
			t.Errorf("consumer %d got %s, want all three again", i+1, value.Format(got))
		}
		must[bool](t)(lib.Destroy(ctx, c))
	}
}

// TestBrain4itUnknownKeys checks that brain4it's names warn about a key they
// do not know and go on, while kafka-create fails on it.
func TestBrain4itUnknownKeys(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	ctx := testCtx(t)
	var warnings strings.Builder
	lib.SetLogOutput(&warnings)
	servers := "127.0.0.1:1"
	c := must[string](t)(lib.Create(ctx, Consumer, brain4it(servers, "offset-reset", "earliest", "max-poll-records", 3)))
	if cfg := handleConfig(t, lib, c); cfg.maxPollRecords != 3 || cfg.autoOffsetReset != resetLatest {
		t.Errorf("known key not applied or unknown one applied: max-poll-records %d, reset %v", cfg.maxPollRecords, cfg.autoOffsetReset)
	}
	must[string](t)(lib.Create(ctx, Producer, brain4it(servers, "linger-ms", 5)))
	want := []string{
		`kafka-consumer: warning: unknown config key "offset-reset" ignored (did you mean "auto-offset-reset"?)`,
		`kafka-producer: warning: unknown config key "linger-ms" ignored (did you mean "linger"?)`,
	}
	if got := strings.Split(strings.TrimSpace(warnings.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", warnings.String(), strings.Join(want, "\n"))
	}
	// A known key with a bad value is still an error.
	if _, err := lib.Create(ctx, Consumer, brain4it(servers, "max-poll-records", "many")); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad value under kafka-consumer: %v, want ErrInvalidConfig", err)
	}
	// kafka-create stays strict.
	_, err := lib.Create(ctx, Consumer, map[string]any{"servers": servers, "offset-reset": "earliest"})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `(did you mean "auto-offset-reset"?)`) {
		t.Errorf("kafka-create with an unknown key: %v, want ErrInvalidConfig with a suggestion", err)
	}
}

// TestPollNotSubscribed checks that a poll of a consumer subscribed to
// nothing fails, under both names, rather than return () for ever.
func TestPollNotSubscribed(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	for _, c := range []string{
		must[string](t)(lib.Create(ctx, Consumer, brain4it(servers))),
		must[string](t)(lib.Create(ctx, Consumer, servers)),
	} {
		_, err := lib.Poll(ctx, c, 10*time.Millisecond)
		if !errors.Is(err, ErrNotSubscribed) || ErrorType(err) != "NotSubscribed" || !strings.Contains(err.Error(), "kafka-poll: the consumer is subscribed to no topic") {
			t.Errorf("poll with no subscription: %v, want ErrNotSubscribed", err)
		}
		must[[]string](t)(lib.Subscribe(ctx, c, []string{"t"}))
		if _, err := lib.Poll(ctx, c, 0); err != nil {
			t.Errorf("poll after subscribe: %v", err)
		}
		must[[]string](t)(lib.Unsubscribe(ctx, c, nil))
		if _, err := lib.Poll(ctx, c, 0); !errors.Is(err, ErrNotSubscribed) {
			t.Errorf("poll after unsubscribing from all: %v, want ErrNotSubscribed", err)
		}
	}
}
