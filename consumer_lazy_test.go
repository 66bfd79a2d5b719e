package kafkabpl

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lazyCases are polls of several kinds: String keys and values with a
// repeated key, a tombstone and an unkeyed record; no keys at all; JSON
// values, one of which does not decode (the records form); and the
// records form throughout.
func lazyCases() map[string][]Record {
	cases := map[string][]Record{"strings": polledRecords(40)}
	cases["strings"] = append(cases["strings"], Record{r: &kgo.Record{Topic: "t", Key: []byte("k3"), Value: []byte("again")}, cfg: defaultConfig()},
		Record{r: &kgo.Record{Topic: "t", Key: []byte(""), Value: []byte("")}, cfg: defaultConfig()})
	var unkeyed []Record
	for i := range 5 {
		unkeyed = append(unkeyed, Record{r: &kgo.Record{Topic: "t", Value: []byte(strconv.Itoa(i))}, cfg: defaultConfig()})
	}
	cases["unkeyed"] = unkeyed
	jcfg := defaultConfig()
	jcfg.valDeser = serde.JSON
	cases["json"] = []Record{
		{r: &kgo.Record{Topic: "t", Key: []byte("a"), Value: []byte(`{"x": [1, 2.5, "s"]}`)}, cfg: jcfg},
		{r: &kgo.Record{Topic: "t", Key: []byte("b"), Value: []byte(`{`)}, cfg: jcfg},
		{r: &kgo.Record{Topic: "t", Value: []byte(`null`)}, cfg: jcfg},
	}
	rcfg := defaultConfig()
	rcfg.pollRecords = true
	cases["records"] = []Record{
		{r: &kgo.Record{Topic: "t", Key: []byte("a"), Value: []byte("1"), Offset: 7}, cfg: rcfg},
		{r: &kgo.Record{Topic: "t", Value: []byte("2"), Offset: 8}, cfg: rcfg},
	}
	return cases
}

// eagerList is what kafka-poll gave before its lists were built on first
// read: every message made at once.
func eagerList(recs []Record) *value.List {
	l := messageList(recs)
	l.Load()
	vals, names := l.Values(), l.Names()
	return value.ListOf(append([]any(nil), vals...), append([]string(nil), names...))
}

// TestLazyMessagesIndistinguishable reads, compares, walks and changes a
// poll's lists built on first read, each beside the list built at once,
// and checks that every operation sees the same.
func TestLazyMessagesIndistinguishable(t *testing.T) {
	for name, recs := range lazyCases() {
		t.Run(name, func(t *testing.T) {
			want := eagerList(recs)
			fresh := func() *value.List { return messageList(recs) }
			if got := fresh(); value.Format(got) != value.Format(want) {
				t.Fatalf("printed:\n%s\nwant:\n%s", value.Format(got), value.Format(want))
			}
			if !fresh().Equal(want) || !want.Equal(fresh()) {
				t.Fatal("not Equal to the list built at once")
			}
			if a, b := fresh(), fresh(); !a.Equal(b) {
				t.Fatal("two lazy lists of one poll not Equal")
			}
			if got := fresh(); got.Len() != want.Len() || got.Named() != want.Named() {
				t.Fatalf("Len %d Named %v, want %d %v", got.Len(), got.Named(), want.Len(), want.Named())
			}
			got := fresh()
			i := 0
			for n, v := range got.All() {
				if n != want.Name(i) || !value.NewList(v).Equal(value.NewList(want.At(i))) {
					t.Fatalf("element %d walked as %q => %s, want %q => %s", i, n, value.Format(v), want.Name(i), value.Format(want.At(i)))
				}
				i++
			}
			if i != want.Len() {
				t.Fatalf("walked %d elements, want %d", i, want.Len())
			}
			// Lookups by name, from the end backwards so that each finds
			// what is not made yet, and one that finds nothing.
			got = fresh()
			for i := want.Len() - 1; i >= 0; i-- {
				n := want.Name(i)
				if got.Index(n) != want.Index(n) {
					t.Fatalf("Index(%q) = %d, want %d", n, got.Index(n), want.Index(n))
				}
			}
			if got := fresh(); got.Index("no such key") != -1 {
				t.Fatal("Index of a missing name")
			}
			// Changes: a put by name and by index, an insert, a remove.
			change := func(l *value.List) *value.List {
				l.Put("k3", "changed")
				l.Set(0, int64(9))
				l.Insert(1, "new", "n")
				l.Remove(l.Len() - 1)
				return l
			}
			if a, b := change(fresh()), change(eagerList(recs)); !a.Equal(b) || value.Format(a) != value.Format(b) {
				t.Fatalf("changed:\n%s\nwant:\n%s", value.Format(a), value.Format(b))
			}
		})
	}
}

// TestLazyMessagesKeptAcrossPolls keeps a poll's list past the next poll,
// partly read, and checks that the next poll made the rest: it no longer
// reads the fetched bytes, which may then change.
func TestLazyMessagesKeptAcrossPolls(t *testing.T) {
	recs := polledRecords(10)
	want := eagerList(recs)
	lists := &pollLists{}
	p := &Polled{Topics: []TopicRecords{{Topic: "t", Records: recs}}, lists: lists, poll: lists.next()}
	msgs, _ := p.List().Get("t")
	l := msgs.(*value.List)
	first := l.At(0) // read before the next poll
	lists.next()     // the next poll
	if len(lists.lists) != 0 {
		t.Fatalf("%d lists still held after the next poll", len(lists.lists))
	}
	for i := range recs {
		for j := range recs[i].r.Value {
			recs[i].r.Value[j] = '#'
		}
		for j := range recs[i].r.Key {
			recs[i].r.Key[j] = '#'
		}
	}
	if first != "v0" || !l.Equal(want) {
		t.Fatalf("kept list changed with the fetched bytes: %s, want %s", value.Format(l), value.Format(want))
	}
	// A list made from a poll that is no longer the latest is made whole
	// at once.
	recs = polledRecords(3)
	old := &Polled{Topics: []TopicRecords{{Topic: "t", Records: recs}}, lists: lists, poll: lists.poll - 1}
	msgs, _ = old.List().Get("t")
	recs[0].r.Value[0] = '#'
	if v := msgs.(*value.List).At(0); v != "v0" {
		t.Fatalf("a stale poll's list read the fetched bytes: %v", v)
	}
}

// TestLazyMessagesConcurrentReads reads one list from several goroutines
// at once, as BPL threads may: run with -race.
func TestLazyMessagesConcurrentReads(t *testing.T) {
	recs := polledRecords(200)
	want := eagerList(recs)
	l := messageList(recs)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 4 {
		wg.Go(func() {
			for k := range l.Len() {
				i := (k*7 + g*13) % l.Len()
				if l.Name(i) != want.Name(i) || l.At(i) != want.At(i) {
					errs <- "element " + strconv.Itoa(i)
					return
				}
			}
		})
	}
	wg.Go(func() { l.Load() })
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestPolledListsFinished polls a real (in-process) cluster, keeps the
// lists of a poll unread, and checks that the next poll, and a destroy,
// copy them whole: the fetched bytes may change afterwards.
func TestPolledListsFinished(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Topics("t"))
	servers := cluster.Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	// The three messages of a poll go in one record batch (a client that
	// sends only when flushed), which one fetch brings whole: sent by
	// Send, the first could be fetched, and polled, alone.
	p := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(cluster.Addrs()...), kgo.ManualFlushing()))
	defer p.Close()
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t", "auto-offset-reset": "earliest"}))
	h, err := lib.acquire(c, Consumer)
	if err != nil {
		t.Fatal(err)
	}
	h.calls.Done()
	held := func() int {
		h.polled.mu.Lock()
		defer h.polled.mu.Unlock()
		return len(h.polled.lists)
	}
	// pollList sends three messages in one batch, polls until they come,
	// and returns the poll and its messages' list, unread.
	pollList := func(tag string) (*Polled, *value.List) {
		for _, r := range []*kgo.Record{{Key: []byte("a"), Value: []byte(tag + "1")}, {Key: []byte("b"), Value: []byte(tag + "2")}, {Value: []byte(tag + "3")}} {
			r.Topic = "t"
			p.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce %s: %v", r.Value, err)
				}
			})
		}
		if err := p.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for {
			res := must[*Polled](t)(lib.Poll(ctx, c, 5*time.Second))
			if res.Len() > 0 {
				msgs, _ := res.List().Get("t")
				return res, msgs.(*value.List)
			}
		}
	}
	scribble := func(res *Polled) {
		for _, r := range res.Topics[0].Records {
			for i := range r.r.Value {
				r.r.Value[i] = '#'
			}
		}
	}
	want := func(tag string) string {
		return `("a" => "` + tag + `1" "b" => "` + tag + `2" "` + tag + `3")`
	}
	res, l := pollList("x")
	if held() != 1 {
		t.Fatalf("%d lists held after a poll's List, want 1", held())
	}
	if res.Len() != 3 {
		t.Fatalf("%d records in the poll, want 3 (one batch)", res.Len())
	}
	must[*Polled](t)(lib.Poll(ctx, c, 0))
	if held() != 0 {
		t.Fatalf("%d lists held after the next poll", held())
	}
	scribble(res)
	if got := value.Format(l); got != want("x") {
		t.Fatalf("after the next poll: %s, want %s", got, want("x"))
	}
	res, l = pollList("y")
	if _, err := lib.Destroy(ctx, c); err != nil {
		t.Fatal(err)
	}
	if held() != 0 {
		t.Fatalf("%d lists held after destroy", held())
	}
	scribble(res)
	if got := value.Format(l); got != want("y") {
		t.Fatalf("after destroy: %s, want %s", got, want("y"))
	}
}
