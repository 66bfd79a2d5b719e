package functions

import (
	"context"
	"testing"
	"unsafe"

	"github.com/brain4it/kafkabpl/value"
)

// sameText reports whether two strings share memory.
func sameText(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// TestKafkaCopy checks that kafka-copy gives what it was given, with no
// text shared: strings, bytes, names at every depth; a sublist held twice
// stays shared, a list that contains itself ends, and the rest is given
// as it is.
func TestKafkaCopy(t *testing.T) {
	cp := Table(newLib(t))["kafka-copy"]
	copyOf := func(v any) any {
		t.Helper()
		got, err := cp(context.Background(), value.NewList(v))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	text := string([]byte("a message's text"))
	if got := copyOf(text).(string); got != text || sameText(got, text) {
		t.Errorf("a string: %q, shared %v", got, sameText(got, text))
	}
	raw := []byte{1, 2}
	if got := copyOf(raw).([]byte); string(got) != string(raw) || &got[0] == &raw[0] {
		t.Errorf("bytes: %v, shared %v", got, &got[0] == &raw[0])
	}
	for _, v := range []any{int64(7), 2.5, true, nil} {
		if got := copyOf(v); got != v {
			t.Errorf("%v: got %v", v, got)
		}
	}
	sub := value.NewList().AppendNamed(string([]byte("inner")), text)
	l := value.NewList(sub, sub).AppendNamed(string([]byte("key")), text)
	got := copyOf(l).(*value.List)
	if !got.Equal(l) || got == l {
		t.Fatalf("a list: %s, want a new %s", value.Format(got), value.Format(l))
	}
	a, b := got.At(0).(*value.List), got.At(1).(*value.List)
	if a != b || a == sub || sameText(got.Name(2), l.Name(2)) || sameText(got.At(2).(string), text) ||
		sameText(a.Name(0), sub.Name(0)) || sameText(a.At(0).(string), text) {
		t.Errorf("a list's sublists or text shared with the original, or its shared sublist copied twice")
	}
	read, err := value.Parse(`(<#1> "self" => <@1> "v" => "x")`)
	if err != nil {
		t.Fatal(err)
	}
	cyclic := read[0].(*value.List)
	if got := copyOf(cyclic).(*value.List); got == cyclic || got.At(0) != got || !got.Equal(cyclic) {
		t.Errorf("a list that contains itself: %s", value.Format(got))
	}
	if _, err := cp(context.Background(), value.NewList()); err == nil {
		t.Error("kafka-copy of nothing: no error")
	}
}

// TestKafkaCopyOfPolledMessage runs a script that keeps a polled message
// and its copy, and checks that the copy's name and value are the
// message's but share no memory with its poll's.
func TestKafkaCopyOfPolledMessage(t *testing.T) {
	t.Parallel()
	const script = `
(set c (kafka-create "consumer" (list "servers" => servers "auto-offset-reset" => "earliest" "topics" => "t")))
(set msgs ())
(while (< (size msgs) 2) (set msgs (get (kafka-poll c 1000) "t")))
(set kept (list))
(for-each msgs (k v) (put kept (kafka-copy k) (kafka-copy v)))
(kafka-destroy c)
(list msgs kept)
`
	got := runOnTopic(t, script, nv{"k0", "v0"}, nv{"k1", "v1"})
	msgs, kept := got.(*value.List).At(0).(*value.List), got.(*value.List).At(1).(*value.List)
	if !kept.Equal(msgs) || value.Format(kept) != `("k0" => "v0" "k1" => "v1")` {
		t.Fatalf("kept %s of %s", value.Format(kept), value.Format(msgs))
	}
	for i := range msgs.Len() {
		if sameText(kept.Name(i), msgs.Name(i)) || sameText(kept.At(i).(string), msgs.At(i).(string)) {
			t.Errorf("message %d: the copy shares its poll's text", i)
		}
	}
}
