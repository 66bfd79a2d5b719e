package functions

import (
	"context"
	"io"
	"testing"

	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
)

// TestBPLPollMessages runs a script over kafka-poll's messages, whose
// text is in one arena per poll, and checks that it sees them as any
// list: printed, compared, walked, looked up, changed, as JSON, and one
// message and the list kept past the next polls.
func TestBPLPollMessages(t *testing.T) {
	t.Parallel()
	const script = `
(set c (kafka-create "consumer" (list "servers" => servers "auto-offset-reset" => "earliest")))
(kafka-subscribe c ("t"))
(set msgs ())
(while (= (size msgs) 0) (set msgs (get (kafka-poll c 1000) "t")))
(set one (get msgs 1))
(kafka-poll c 0)
(kafka-poll c 0)
(set walked ())
(for-each msgs (k v) (push walked (list k v)))
(set changed (clone msgs))
(put changed "k0" "put")
(list
  (string msgs)
  (= msgs (list "k0" => "v0" "k1" => "v1" "k0" => "again"))
  one
  (get msgs "k0")
  (size msgs)
  (names msgs)
  walked
  changed
  (string msgs format => "json"))
`
	got := runOnTopic(t, script, nv{"k0", "v0"}, nv{"k1", "v1"}, nv{"k0", "again"})
	want := `("(\"k0\" => \"v0\" \"k1\" => \"v1\" \"k0\" => \"again\")" true "v1" "v0" 3 ("k0" "k1" "k0") (("k0" "v0") ("k1" "v1") ("k0" "again")) ("k0" => "put" "k1" => "v1" "k0" => "again") "{\"k0\":\"v0\",\"k1\":\"v1\",\"k0\":\"again\"}")`
	if s := value.Format(got); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

// runOnTopic sends msgs (as kafka-send's messages) to the topic "t" of a
// new cluster, then runs script with the function table, servers naming
// the cluster, and returns the script's value.
func runOnTopic(t *testing.T, script string, msgs ...any) any {
	servers := testkit.NewCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	mustCall(t, lib, "kafka-send", mustCall(t, lib, "kafka-create", "producer", servers), "t", bplList(t, msgs...))
	in := bpl.New(io.Discard)
	defer in.Close()
	for name, f := range Table(lib) {
		in.Define(name, f)
	}
	in.SetGlobal("servers", servers)
	var got any
	if err := in.Run(context.Background(), "poll.bpl", script, func(v any) { got = v }); err != nil {
		t.Fatal(err)
	}
	return got
}
