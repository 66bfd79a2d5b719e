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

// TestBrain4itDefaults checks that brain4it's kafka-consumer uses the
// consumer defaults of brain4it's Java library, and kafka-create Kafka's.
func TestBrain4itDefaults(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	servers := "127.0.0.1:1" // nothing is dialed
	b4 := handleConfig(t, lib, mustCall(t, lib, "kafka-consumer", servers).(string))
	kc := handleConfig(t, lib, mustCall(t, lib, "kafka-create", "consumer", servers).(string))
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
	on := handleConfig(t, lib, mustCall(t, lib, "kafka-consumer", servers, nv{"enable-auto-commit", true}).(string))
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
	p := mustCall(t, lib, "kafka-producer", servers)
	mustCall(t, lib, "kafka-send", p, "replay", []any{"a", "b", "c"})
	for i := range 2 {
		c := mustCall(t, lib, "kafka-consumer", servers, nv{"group-id", "replay-g"}, nv{"auto-offset-reset", "earliest"})
		mustCall(t, lib, "kafka-subscribe", c, "replay")
		got := pollUntil(t, lib, c.(string), nil, 3)["replay"]
		if value.Format(got) != `("a" "b" "c")` {
			t.Errorf("consumer %d got %s, want all three again", i+1, value.Format(got))
		}
		mustCall(t, lib, "kafka-delete-app", c)
	}
}

// TestBrain4itUnknownKeys checks that brain4it's names warn about a key they
// do not know and go on, while kafka-create fails on it.
func TestBrain4itUnknownKeys(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	var warnings strings.Builder
	lib.SetLogOutput(&warnings)
	servers := "127.0.0.1:1"
	c := mustCall(t, lib, "kafka-consumer", servers, nv{"offset-reset", "earliest"}, nv{"max-poll-records", 3}).(string)
	if cfg := handleConfig(t, lib, c); cfg.maxPollRecords != 3 || cfg.autoOffsetReset != resetLatest {
		t.Errorf("known key not applied or unknown one applied: max-poll-records %d, reset %v", cfg.maxPollRecords, cfg.autoOffsetReset)
	}
	mustCall(t, lib, "kafka-producer", servers, nv{"linger-ms", 5})
	want := []string{
		`kafka-consumer: warning: unknown config key "offset-reset" ignored (did you mean "auto-offset-reset"?)`,
		`kafka-producer: warning: unknown config key "linger-ms" ignored (did you mean "linger"?)`,
	}
	if got := strings.Split(strings.TrimSpace(warnings.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", warnings.String(), strings.Join(want, "\n"))
	}
	// A known key with a bad value is still an error.
	if _, err := call(t, lib, "kafka-consumer", servers, nv{"max-poll-records", "many"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad value under kafka-consumer: %v, want ErrInvalidConfig", err)
	}
	// kafka-create stays strict.
	_, err := call(t, lib, "kafka-create", "consumer", bplList(t, nv{"servers", servers}, nv{"offset-reset", "earliest"}))
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
	for _, c := range []any{
		mustCall(t, lib, "kafka-consumer", servers),
		mustCall(t, lib, "kafka-create", "consumer", servers),
	} {
		_, err := call(t, lib, "kafka-poll", c, 10)
		if !errors.Is(err, ErrNotSubscribed) || ErrorType(err) != "NotSubscribed" || !strings.Contains(err.Error(), "kafka-poll: the consumer is subscribed to no topic") {
			t.Errorf("poll with no subscription: %v, want ErrNotSubscribed", err)
		}
		mustCall(t, lib, "kafka-subscribe", c, "t")
		if _, err := call(t, lib, "kafka-poll", c, 0); err != nil {
			t.Errorf("poll after subscribe: %v", err)
		}
		mustCall(t, lib, "kafka-unsubscribe", c)
		if _, err := call(t, lib, "kafka-poll", c, 0); !errors.Is(err, ErrNotSubscribed) {
			t.Errorf("poll after unsubscribing from all: %v, want ErrNotSubscribed", err)
		}
	}
}
