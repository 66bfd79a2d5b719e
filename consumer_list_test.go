package kafkabpl

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// polledRecords returns n polled records with String keys and values, as
// the default consumer config reads them, plus a tombstone and an unkeyed
// record at the end.
func polledRecords(n int) []Record {
	cfg := defaultConfig()
	recs := make([]Record, 0, n+2)
	for i := range n {
		recs = append(recs, Record{r: &kgo.Record{Topic: "t", Key: []byte("k" + strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))}, cfg: cfg})
	}
	recs = append(recs, Record{r: &kgo.Record{Topic: "t", Key: []byte("gone")}, cfg: cfg})
	recs = append(recs, Record{r: &kgo.Record{Topic: "t", Value: []byte("no key")}, cfg: cfg})
	return recs
}

// pollCases are polls of several kinds: String keys and values with a
// repeated key, a tombstone, an unkeyed record and an empty key and value;
// no keys at all; JSON values, one of which does not decode (the records
// form); ByteArray keys and values; and the records form throughout, with
// ByteArray keys and values.
func pollCases() map[string][]Record {
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
	bcfg := defaultConfig()
	bcfg.keyDeser, bcfg.valDeser = serde.ByteArray, serde.ByteArray
	cases["bytes"] = []Record{
		{r: &kgo.Record{Topic: "t", Key: []byte("a"), Value: []byte("raw")}, cfg: bcfg},
		{r: &kgo.Record{Topic: "t", Value: []byte{0, 1}}, cfg: bcfg},
	}
	rcfg := defaultConfig()
	rcfg.pollRecords = true
	rbcfg := *bcfg
	rbcfg.pollRecords = true
	cases["records"] = []Record{
		{r: &kgo.Record{Topic: "t", Key: []byte("a"), Value: []byte("1"), Offset: 7}, cfg: rcfg},
		{r: &kgo.Record{Topic: "t", Value: []byte("2"), Offset: 8}, cfg: rcfg},
		{r: &kgo.Record{Topic: "t", Key: []byte("b"), Value: []byte("3"), Offset: 9}, cfg: &rbcfg},
	}
	return cases
}

// topicList is kafka-poll's list of one topic's records.
func topicList(recs []Record) *value.List {
	msgs, _ := (&Polled{Topics: []TopicRecords{{Topic: "t", Records: recs}}}).List().Get("t")
	return msgs.(*value.List)
}

// scribble overwrites the keys and values of recs, as a reused fetch
// buffer would.
func scribble(recs []Record) {
	for i := range recs {
		for _, b := range [][]byte{recs[i].r.Key, recs[i].r.Value} {
			for j := range b {
				b[j] = '#'
			}
		}
	}
}

// TestMessageListMatchesRecords checks each kind of poll's list against
// the list built one conversion per element, printed, compared, walked,
// looked up and changed, and that it owns its text: the fetched bytes
// may change after List returns.
func TestMessageListMatchesRecords(t *testing.T) {
	for name, recs := range pollCases() {
		t.Run(name, func(t *testing.T) {
			want := messagesListSlow(recs)
			got := topicList(recs)
			if value.Format(got) != value.Format(want) || !got.Equal(want) || !want.Equal(got) {
				t.Fatalf("messages:\n%s\nwant:\n%s", value.Format(got), value.Format(want))
			}
			if got.Len() != len(recs) || got.Named() != want.Named() {
				t.Fatalf("Len %d Named %v, want %d %v", got.Len(), got.Named(), len(recs), want.Named())
			}
			i := 0
			for n, v := range got.All() {
				if n != want.Name(i) || !equalValues(v, want.At(i)) || got.Index(n) != want.Index(n) {
					t.Fatalf("element %d: %q => %s, want %q => %s", i, n, value.Format(v), want.Name(i), value.Format(want.At(i)))
				}
				i++
			}
			change := func(l *value.List) *value.List {
				l.Put("k3", "changed")
				l.Set(0, int64(9))
				l.Insert(1, "new", "n")
				l.Remove(l.Len() - 1)
				return l
			}
			if a, b := change(topicList(recs)), change(messagesListSlow(recs)); !a.Equal(b) {
				t.Fatalf("changed:\n%s\nwant:\n%s", value.Format(a), value.Format(b))
			}
			printed := value.Format(got)
			scribble(recs)
			if value.Format(got) != printed {
				t.Fatalf("the list changed with the fetched bytes:\n%s\nwas:\n%s", value.Format(got), printed)
			}
		})
	}
}

// messagesListSlow is the list built one conversion per element, for
// comparison.
func messagesListSlow(recs []Record) *value.List {
	l := &value.List{}
	for i := range recs {
		r := &recs[i]
		switch {
		case r.cfg.pollRecords || r.Err() != nil:
			l.Append(r.List())
		case r.Key() != nil:
			l.AppendNamed(keyName(r.Key()), r.Value())
		default:
			l.Append(r.Value())
		}
	}
	return l
}

// TestPollListTopics checks a poll of several topics, whose text shares
// one arena: each topic's list is its own records'.
func TestPollListTopics(t *testing.T) {
	a, b := polledRecords(3), polledRecords(2)
	for i := range b {
		b[i].r.Topic = "u"
	}
	l := (&Polled{Topics: []TopicRecords{{Topic: "t", Records: a}, {Topic: "u", Records: b}, {Topic: "v"}}}).List()
	want := "(\"t\" => " + value.Format(messagesListSlow(a)) + " \"u\" => " + value.Format(messagesListSlow(b)) + " \"v\" => ())"
	scribble(a)
	scribble(b)
	if got := value.Format(l); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestPollListAllocs(t *testing.T) {
	recs := polledRecords(1000)
	p := &Polled{Topics: []TopicRecords{{Topic: "t", Records: recs}}}
	// The topics' and messages' lists, the messages' values and names,
	// and the arena of their text: the same for 1,000 messages as for
	// one, every message read.
	allocs := testing.AllocsPerRun(20, func() {
		msgs, _ := p.List().Get("t")
		for _, v := range msgs.(*value.List).Values() {
			_ = v
		}
	})
	if allocs > 4 {
		t.Fatalf("a poll of %d records listed and read in %.0f allocations, want at most 4", len(recs), allocs)
	}
	if got := value.Format(p.List()); got != "(\"t\" => "+value.Format(messagesListSlow(recs))+")" {
		t.Fatalf("poll list: %.200s", got)
	}
}

// TestPolledListOwnsItsText polls a real (in-process) cluster and checks
// that the poll's list holds nothing of the fetched batch: the fetched
// bytes may change once List returned, and a list kept past the next
// poll and the consumer's destroy is unchanged.
func TestPolledListOwnsItsText(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t", "auto-offset-reset": "earliest"}))
	must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{{Key: "a", Value: "x1"}, {Key: "b", Value: "x2"}, {Value: "x3"}}))
	var res *Polled
	waitFor(t, "the three messages", func() bool {
		res = must[*Polled](t)(lib.Poll(ctx, c, 100*time.Millisecond))
		return res.Len() > 0
	})
	if res.Len() != 3 {
		t.Fatalf("%d records in the poll, want 3 (one batch)", res.Len())
	}
	l := res.List()
	scribble(res.Topics[0].Records)
	must[*Polled](t)(lib.Poll(ctx, c, 0))
	if _, err := lib.Destroy(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, want := value.Format(l), `("t" => ("a" => "x1" "b" => "x2" "x3"))`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestRecordList(t *testing.T) {
	cfg := defaultConfig()
	ts := time.UnixMilli(1700000000123)
	r := &Record{r: &kgo.Record{Topic: "t", Partition: 300, Offset: 1 << 40, Timestamp: ts, Key: []byte("k"), Value: []byte("v"),
		Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}, {Key: "n"}}}, cfg: cfg}
	want := `("topic" => "t" "partition" => 300 "offset" => 1099511627776 "timestamp" => 1700000000123 "key" => "k" "value" => "v" "headers" => ("h" => "x" "n" => null))`
	if got := value.Format(r.List()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A value the deserializer refuses: its raw bytes, and why.
	jcfg := *cfg
	jcfg.valDeser = serde.JSON
	bad := &Record{r: &kgo.Record{Topic: "t", Value: []byte("{"), Timestamp: ts}, cfg: &jcfg}
	l := bad.List()
	if v, _ := l.Get("value"); !bytes.Equal(v.([]byte), []byte("{")) || l.Index("error") < 0 || l.Index("key") < 0 {
		t.Errorf("a record that does not decode: %s", value.Format(l))
	}
	if v, _ := l.Get("key"); v != nil {
		t.Errorf("null key: %#v", v)
	}
	plain := &Record{r: &kgo.Record{Topic: "t", Key: []byte("k"), Value: []byte("v")}, cfg: cfg}
	if allocs := testing.AllocsPerRun(100, func() { plain.List() }); allocs > 1 {
		t.Errorf("Record.List: %.0f allocations, want 1 (the text inside the list's own)", allocs)
	}
	big := &Record{r: &kgo.Record{Topic: "t", Key: []byte("k"), Value: bytes.Repeat([]byte("v"), 200)}, cfg: cfg}
	if allocs := testing.AllocsPerRun(100, func() { big.List() }); allocs > 2 {
		t.Errorf("Record.List of a 200-byte value: %.0f allocations, want at most 2", allocs)
	}
	if v, _ := big.List().Get("value"); v != strings.Repeat("v", 200) {
		t.Errorf("200-byte value read as %v", v)
	}
}

// TestKeptMessageHeap keeps one message of each of 1,000 polls of 500
// records of 100 bytes and checks what kafka-poll's docs say it costs:
// each kept message holds its poll's arena, no more (the poll's text and
// its boxed headers, rounded up to whole 8 KiB pages as the allocator
// rounds a large object, and its slot in the list that keeps it). One
// that held its poll's list, or the fetched records, or a second arena,
// would fail; so would one that held less than its poll's text, which
// the docs would then overstate.
func TestKeptMessageHeap(t *testing.T) {
	const polls, records, size = 1000, 500, 100
	longestKey := len(strconv.Itoa(polls*records - 1))
	arena := records * (int(unsafe.Sizeof("")) + size + longestKey)
	most := float64((arena+8191)/8192*8192 + 1024)
	got := keptHeap(polls, records, size, false)
	t.Logf("%.0f bytes of heap per kept message (its poll's arena: %d bytes)", got, arena)
	if got > most || got < float64(records*size) {
		t.Fatalf("%.0f bytes of heap per kept message, want from %d (its poll's text) to %.0f (its poll's arena)", got, records*size, most)
	}
}
