package kafkabpl

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kgo"
)

// groupRecorder is a GroupHook and nothing else: franz-go would refuse
// it as a hook of its own.
type groupRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *groupRecorder) OnGroupCommit(group string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s commit %v", group, err))
}

func (r *groupRecorder) OnGroupRebalance(group string, event GroupEvent, partitions int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %d", group, event, partitions))
}

func (r *groupRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// TestGroupHook: a hook that is only a GroupHook is kept from franz-go
// (a producer is made with it) and told of a consumer's assignment, its
// commits and its partitions' revocation as it is destroyed; ClientLags
// reports the consumer's partitions at 0 once it read everything, under
// the group given, or "" for a consumer given none.
func TestGroupHook(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	lib.SetLogOutput(nil)
	rec := &groupRecorder{}
	lib.SetClientHooks(func(Kind, string) []kgo.Hook { return []kgo.Hook{rec} })
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}, {Key: "c", Value: "3"}}))

	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g", "topics": "t",
		"auto-offset-reset": "earliest", "enable-auto-commit": false}))
	anon := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t", "auto-offset-reset": "earliest"}))
	for _, id := range []string{c, anon} {
		read := 0
		waitFor(t, "every record read", func() bool {
			read += must[*Polled](t)(lib.Poll(ctx, id, 100*time.Millisecond)).Len()
			return read >= 3
		})
	}
	if err := lib.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := lib.Commit(ctx, c); err != nil { // nothing polled since: nothing sent, nothing told
		t.Fatal(err)
	}
	want := []ClientLag{{Consumer, "", "t", 0, 0}, {Consumer, "", "t", 1, 0}, {Consumer, "g", "t", 0, 0}, {Consumer, "g", "t", 1, 0}}
	waitFor(t, "the lags at 0", func() bool { return slices.Equal(lib.ClientLags(), want) })
	if _, err := lib.Destroy(ctx, c); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rec.seen() {
		if e[0] == 'g' {
			got = append(got, e)
		}
	}
	if fmt.Sprint(got) != "[g assigned 2 g commit <nil> g revoked 2]" {
		t.Errorf("group g's events: %q", got)
	}
	if e := rec.seen(); !slices.Contains(e, " assigned 2") {
		t.Errorf("the consumer given no group: %q", e)
	}
}
