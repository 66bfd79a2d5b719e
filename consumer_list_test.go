package kafkabpl

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

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

func TestMessageListMatchesRecords(t *testing.T) {
	recs := polledRecords(50)
	l := messageList(recs)
	if got, want := value.Format(l), value.Format(messagesListSlow(recs)); got != want {
		t.Fatalf("messageList:\n%s\nwant:\n%s", got, want)
	}
	if l.Len() != len(recs) {
		t.Fatalf("%d messages, want %d", l.Len(), len(recs))
	}
	for i := range recs {
		r := &recs[i]
		wantName := ""
		if k := r.Key(); k != nil {
			wantName = k.(string)
		}
		if l.Name(i) != wantName || l.At(i) != r.Value() {
			t.Fatalf("message %d: %q => %#v, want %q => %#v", i, l.Name(i), l.At(i), wantName, r.Value())
		}
	}
	// The list owns its text once read: the fetched bytes may go or change.
	recs[0].r.Value[0], recs[0].r.Key[0] = 'X', 'X'
	if l.At(0) != "v0" || l.Name(0) != "k0" {
		t.Fatalf("message 0 changed with the fetched bytes: %q => %v", l.Name(0), l.At(0))
	}
}

// messagesListSlow is the list built one conversion per element, for
// comparison.
func messagesListSlow(recs []Record) *value.List {
	l := &value.List{}
	for i := range recs {
		if k := recs[i].Key(); k != nil {
			l.AppendNamed(keyName(k), recs[i].Value())
		} else {
			l.Append(recs[i].Value())
		}
	}
	return l
}

func TestPollListAllocs(t *testing.T) {
	recs := polledRecords(1000)
	lists := &pollLists{}
	p := &Polled{Topics: []TopicRecords{{Topic: "t", Records: recs}}, lists: lists}
	allocs := testing.AllocsPerRun(20, func() { p.List(); lists.lists = lists.lists[:0] })
	// The topics' list, the messages' list with its values, names and
	// flags, and its source: the same for 1,000 messages as for one,
	// since nothing is read.
	if allocs > 6 {
		t.Fatalf("a poll of %d records made a list in %.0f allocations, want at most 6", len(recs), allocs)
	}
	// Reading every message: one allocation each (its key and value
	// together), but for the tombstone's key alone and the unkeyed value.
	allocs = testing.AllocsPerRun(20, func() {
		msgs, _ := p.List().Get("t")
		for _, v := range msgs.(*value.List).Values() {
			_ = v
		}
		lists.lists = lists.lists[:0]
	})
	if allocs > 6+float64(len(recs)) {
		t.Fatalf("a poll of %d records read whole in %.0f allocations, want at most %d", len(recs), allocs, 6+len(recs))
	}
	if got := value.Format(p.List()); got != "(\"t\" => "+value.Format(messagesListSlow(recs))+")" {
		t.Fatalf("poll list: %.200s", got)
	}
}

// TestPollListsOwnBytes checks that a poll's lists copy the []byte
// values that share the fetched bytes (ByteArray's, and a record's that
// did not deserialize): the fetched bytes may change once read.
func TestPollListsOwnBytes(t *testing.T) {
	bcfg := defaultConfig()
	bcfg.keyDeser, bcfg.valDeser = serde.ByteArray, serde.ByteArray
	jcfg := defaultConfig()
	jcfg.valDeser = serde.JSON
	rcfg := *bcfg
	rcfg.pollRecords = true
	recs := []Record{
		{r: &kgo.Record{Topic: "t", Key: []byte("a"), Value: []byte("raw")}, cfg: bcfg},
		{r: &kgo.Record{Topic: "t", Key: []byte("b"), Value: []byte("{")}, cfg: jcfg},
		{r: &kgo.Record{Topic: "t", Key: []byte("c"), Value: []byte("rec")}, cfg: &rcfg},
	}
	l := messageList(recs)
	l.Load()
	printed := value.Format(l)
	for i := range recs {
		for _, b := range [][]byte{recs[i].r.Key, recs[i].r.Value} {
			for j := range b {
				b[j] = '#'
			}
		}
	}
	if got := value.Format(l); got != printed || strings.Contains(got, "#") {
		t.Fatalf("the list changed with the fetched bytes:\n%s\nwas:\n%s", got, printed)
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
