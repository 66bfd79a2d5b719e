//go:build unix

package main

// TestRealKafka's share group subtests (KIP-932), on Kafka 4.4, where
// share groups are on by default:
//
//   - split a partition: two share consumers of one group read a topic of
//     one partition while 200 messages are sent, 5 at a time; each message
//     is delivered once overall, with delivery count 1, and both get some.
//     Once both commit, the group's description shows it as a share group
//     with both members on the partition and no lag.
//   - release and reject: of three records, the released one comes back
//     with delivery count 2, the rejected one never, the one left alone is
//     accepted by the next poll; the group has no lag then.
//   - frozen consumer: a `kafkabpl run` process holds a poll's records and
//     is stopped (SIGSTOP) once another member has the partition too; its
//     connection stays open: the other member gets them, delivery count 2,
//     once their lock ends, not before (the group's
//     share.record.lock.duration.ms, 10 s here, set with
//     kafka-alter-configs' method before the group reads).
//   - shared with Java: a Java KafkaShareConsumer (kafka-clients 4.4,
//     testdata/interop/java/Peer.java's share mode) and a kafkabpl share
//     consumer in one share group split a partition while 200 messages are
//     sent, 5 at a time: each is delivered once overall, with delivery
//     count 1, both get some, and once both commit the group has no lag.
//     Without java or the jars it skips, and fails under CI, as
//     TestJavaInterop does.
//   - killed consumer: the same with SIGKILL: the records come back, with
//     delivery count 2, at the latest when their lock ends and a margin;
//     the test logs when.
//   - renew, refused acknowledgement, reset and delete: see
//     realkafka_share_ops_test.go.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
)

func testRealShare(t *testing.T, servers, bin string) {
	concurrently(t, map[string]func(*testing.T){
		"split a partition":       func(t *testing.T) { testRealShareSplit(t, servers) },
		"release and reject":      func(t *testing.T) { testRealShareAcks(t, servers) },
		"frozen consumer":         func(t *testing.T) { testRealShareDead(t, servers, bin, syscall.SIGSTOP, "rk-share-frozen") },
		"killed consumer":         func(t *testing.T) { testRealShareDead(t, servers, bin, syscall.SIGKILL, "rk-share-killed") },
		"shared with Java":        func(t *testing.T) { testRealShareJava(t, servers) },
		"renew":                   func(t *testing.T) { testRealShareRenew(t, servers) },
		"refused acknowledgement": func(t *testing.T) { testRealShareRefused(t, servers) },
		"reset and delete":        func(t *testing.T) { testRealShareReset(t, servers) },
	})
}

// sharedMsg is a record a share consumer polled.
type sharedMsg struct {
	value      string
	deliveries int
}

// pollShared polls share consumer c once.
func pollShared(ctx context.Context, lib *kafkabpl.Library, c string, timeout time.Duration) ([]sharedMsg, error) {
	res, err := lib.Poll(ctx, c, timeout)
	if err != nil {
		return nil, err
	}
	var out []sharedMsg
	for _, tr := range res.Topics {
		for i := range tr.Records {
			r := &tr.Records[i]
			out = append(out, sharedMsg{fmt.Sprint(r.Value()), r.DeliveryCount()})
		}
	}
	return out, nil
}

// shareStart is the group config that makes group read from the start
// of its partitions, with a lock of lockMs when not 0.
func shareStart(t *testing.T, ctx context.Context, lib *kafkabpl.Library, servers, group string, lockMs int) {
	t.Helper()
	set := map[string]string{"share.auto.offset.reset": "earliest"}
	if lockMs > 0 {
		set["share.record.lock.duration.ms"] = fmt.Sprint(lockMs)
	}
	noErr(t, lib.AlterConfigs(ctx, servers, kafkabpl.GroupConfigs(group), set, nil))
}

func testRealShareSplit(t *testing.T, servers string) {
	const topic, group, n = "rk-share-split", "rk-share-split-g", 200
	lib := newRealLib(t)
	ctx := realCtx(t)
	ok[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{topic}, kafkabpl.TopicOptions{Partitions: 1}))
	shareStart(t, ctx, lib, servers, group, 0)
	cfg := map[string]any{"servers": servers, "group": group, "topics": topic, "max-poll-records": 5}
	members := []string{ok[string](t)(lib.Create(ctx, kafkabpl.ShareConsumer, cfg)), ok[string](t)(lib.Create(ctx, kafkabpl.ShareConsumer, cfg))}
	deadline := time.Now().Add(testTimeout)
	for {
		info, err := lib.DescribeGroup(ctx, servers, group)
		if err == nil && info.Type == "share" && len(info.Members) == 2 && len(info.Members[0].Assignment) == 1 && len(info.Members[1].Assignment) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the share group did not assign the partition to both members in %v: %+v %v", testTimeout, info, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	var mu sync.Mutex
	by := map[string][]string{} // value -> the members it was delivered to
	count := map[string]int{}
	var wg sync.WaitGroup
	for _, c := range members {
		wg.Go(func() {
			for end := time.Now().Add(testTimeout); time.Now().Before(end); {
				msgs, err := pollShared(ctx, lib, c, 200*time.Millisecond)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, m := range msgs {
					by[m.value] = append(by[m.value], c)
					count[c]++
					if m.deliveries != 1 {
						t.Errorf("%s: delivery count %d, want 1", m.value, m.deliveries)
					}
				}
				all := len(by) == n
				mu.Unlock()
				if all {
					break
				}
			}
			noErr(t, lib.Commit(ctx, c))
		})
	}
	p := newProducer(t, lib, ctx, servers)
	for i := 0; i < n; i += 5 {
		ok[int](t)(lib.Send(ctx, p, []string{topic}, textMessages(fmt.Sprint(i), fmt.Sprint(i+1), fmt.Sprint(i+2), fmt.Sprint(i+3), fmt.Sprint(i+4))))
	}
	wg.Wait()
	for v, to := range by {
		if len(to) != 1 {
			t.Errorf("%s delivered %d times (%v)", v, len(to), to)
		}
	}
	if len(by) != n || count[members[0]] == 0 || count[members[1]] == 0 {
		t.Fatalf("%d of %d delivered, %v per member", len(by), n, count)
	}
	t.Logf("split %d and %d", count[members[0]], count[members[1]])
	// The start offset moves up as Kafka writes the group's state, which
	// it may do later; the lag counts what is not acknowledged.
	info := ok[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(ctx, servers, group))
	got := value.Format(info.List())
	if !strings.HasPrefix(got, `("group" => "`+group+`" "state" => "Stable" "type" => "share" "members" => (`) || len(info.Members) != 2 ||
		len(info.Lag) != 1 || len(info.Lag[0].Partitions) != 1 || info.Lag[0].Partitions[0].End != n || info.Lag[0].Partitions[0].Lag != 0 || info.TotalLag != 0 {
		t.Errorf("described %s, want a share group of 2 members and no lag", got)
	}
}

func testRealShareAcks(t *testing.T, servers string) {
	const topic, group = "rk-share-acks", "rk-share-acks-g"
	lib := newRealLib(t)
	ctx := realCtx(t)
	shareStart(t, ctx, lib, servers, group, 0)
	p := newProducer(t, lib, ctx, servers)
	ok[int](t)(lib.Send(ctx, p, []string{topic}, textMessages("keep", "retry", "poison")))
	c := ok[string](t)(lib.Create(ctx, kafkabpl.ShareConsumer, map[string]any{"servers": servers, "group": group, "topics": topic}))
	var recs []kafkabpl.Record
	for end := time.Now().Add(testTimeout); len(recs) == 0 && time.Now().Before(end); {
		if res := ok[*kafkabpl.Polled](t)(lib.Poll(ctx, c, time.Second)); res.Len() > 0 {
			recs = res.Topics[0].Records
		}
	}
	if len(recs) != 3 {
		t.Fatalf("polled %d records, want keep, retry and poison", len(recs))
	}
	noErr(t, lib.Ack(c, kafkabpl.AckRelease, recs[1].ID()))
	noErr(t, lib.Ack(c, kafkabpl.AckReject, recs[2].ID()))
	var again []sharedMsg
	for end := time.Now().Add(testTimeout); len(again) == 0 && time.Now().Before(end); {
		again = ok[[]sharedMsg](t)(pollShared(ctx, lib, c, time.Second))
	}
	if fmt.Sprint(again) != "[{retry 2}]" {
		t.Fatalf("after release and reject polled %v, want retry with delivery count 2", again)
	}
	noErr(t, lib.Commit(ctx, c))
	if more := ok[[]sharedMsg](t)(pollShared(ctx, lib, c, 3*time.Second)); len(more) > 0 {
		t.Errorf("after the commit polled %v", more)
	}
	info := ok[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(ctx, servers, group))
	if info.TotalLag != 0 || len(info.Lag) != 1 || info.Lag[0].Partitions[0].End != 3 {
		t.Errorf("described %s, want no lag", value.Format(info.List()))
	}
}

// holdScript is a script that polls a share consumer of group on topic,
// as client id "holder", until it gets records, prints "holding VALUE
// DELIVERY-COUNT ACQUISITION-DEADLINE" for each and "held N", then sleeps,
// acknowledging nothing.
const holdScript = `(set q (kafka-create "share-consumer" (list "servers" => kafka-servers "group" => %q "topics" => %q
  "client-id" => "holder" "poll-format" => "records")))
(set held (list))
(set polls 0)
(while (and (= (size held) 0) (< polls 60))
  (set held (get (kafka-poll q 1000) %[2]q))
  (set polls (+ polls 1)))
(for-each held r (print "holding" (get r "value") (get r "delivery-count") (get r "acquisition-deadline")))
(print "held" (size held))
(sleep 120000)
`

// testRealShareDead has a `kafkabpl run` process hold 10 records of a
// share group on topic, under a 10 s lock; once another member, "taker",
// has the partition too, it sends the holder sig. The taker must get
// every record, those held with delivery count 2, within the lock and a
// margin; a frozen holder's not before their lock ends.
func testRealShareDead(t *testing.T, servers, bin string, sig syscall.Signal, topic string) {
	const lockMs, n = 10000, 10
	group := topic + "-g"
	lib := newRealLib(t)
	ctx := realCtx(t)
	shareStart(t, ctx, lib, servers, group, lockMs)
	p := newProducer(t, lib, ctx, servers)
	var jobs []string
	for i := range n {
		jobs = append(jobs, fmt.Sprintf("job-%d", i))
	}
	ok[int](t)(lib.Send(ctx, p, []string{topic}, textMessages(jobs...)))

	script := filepath.Join(t.TempDir(), "hold.bpl")
	if err := os.WriteFile(script, fmt.Appendf(nil, holdScript, group, topic), 0o644); err != nil {
		t.Fatal(err)
	}
	holder := startPeer(t, ctx, bin, "run", "--servers", servers, script)
	held := map[string]time.Time{} // value -> its lock's end
	var lockEnd time.Time          // the earliest
	for end := time.Now().Add(testTimeout); ; time.Sleep(50 * time.Millisecond) {
		out := holder.stdout.String()
		if strings.Contains("\n"+out, "\nheld ") {
			for line := range strings.Lines(out) {
				var v string
				var count, ms int64
				if _, err := fmt.Sscanf(line, "holding %s %d %d", &v, &count, &ms); err == nil && count == 1 {
					held[v] = time.UnixMilli(ms)
					if lockEnd.IsZero() || held[v].Before(lockEnd) {
						lockEnd = held[v]
					}
				}
			}
			break
		}
		if holder.exited() || time.Now().After(end) {
			t.Fatalf("the holder did not say what it held: %s", holder)
		}
	}
	if len(held) == 0 || time.Until(lockEnd) > lockMs*time.Millisecond {
		t.Fatalf("the holder held %v, locked until %v: %s", held, lockEnd, holder)
	}

	c := ok[string](t)(lib.Create(ctx, kafkabpl.ShareConsumer, map[string]any{"servers": servers, "group": group, "topics": topic, "client-id": "taker"}))
	for joined := false; !joined; time.Sleep(100 * time.Millisecond) {
		info, err := lib.DescribeGroup(ctx, servers, group)
		for i := 0; err == nil && i < len(info.Members); i++ {
			joined = joined || info.Members[i].ClientID == "taker" && len(info.Members[i].Assignment) == 1
		}
		if time.Until(lockEnd) < time.Second {
			t.Fatalf("the taker did not get the partition before the held records' lock was about to end (%v): %+v %v", lockEnd, info, err)
		}
	}
	signalled := time.Now()
	if err := holder.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{} // value -> delivery count
	var back time.Time      // when the first held record came back
	for end := lockEnd.Add(testTimeout); len(got) < n && time.Now().Before(end); {
		for _, m := range ok[[]sharedMsg](t)(pollShared(ctx, lib, c, time.Second)) {
			if _, dup := got[m.value]; dup {
				t.Errorf("%s delivered twice to the taker", m.value)
			}
			got[m.value] = m.deliveries
			if _, wasHeld := held[m.value]; wasHeld && back.IsZero() {
				back = time.Now()
			}
		}
	}
	noErr(t, lib.Commit(ctx, c))
	t.Logf("%v: %d records held; they came back %v after the signal, %v after their lock ended",
		sig, len(held), back.Sub(signalled).Round(time.Millisecond), back.Sub(lockEnd).Round(time.Millisecond))
	for _, v := range jobs {
		want := 1
		if _, wasHeld := held[v]; wasHeld {
			want = 2
		}
		if d, ok := got[v]; !ok || d != want {
			t.Errorf("%s: delivered to the taker %v, with delivery count %d; want %d", v, ok, d, want)
		}
	}
	// Frozen, the holder keeps its connection: only the lock's end gives
	// its records back. Killed, it does not: Kafka 4.4 releases them when
	// it sees the connection close, well before (the log says when).
	if sig == syscall.SIGSTOP && back.Before(lockEnd.Add(-500*time.Millisecond)) {
		t.Errorf("the frozen holder's records came back at %v, before their lock ended at %v", back, lockEnd)
	}
	if back.After(lockEnd.Add(5 * time.Second)) {
		t.Errorf("the holder's records came back at %v, more than 5 s after their lock ended at %v", back, lockEnd)
	}
}

func testRealShareJava(t *testing.T, servers string) {
	const topic, group, n = "rk-share-java", "rk-share-java-g", 200
	java := needJava(t)
	lib := newRealLib(t)
	ctx := realCtx(t)
	ok[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{topic}, kafkabpl.TopicOptions{Partitions: 1}))
	shareStart(t, ctx, lib, servers, group, 0)
	peer := startPipedPeer(t, ctx, java, javaArgs("share", servers, topic, group)...)
	c := ok[string](t)(lib.Create(ctx, kafkabpl.ShareConsumer, map[string]any{"servers": servers, "group": group, "topics": topic, "max-poll-records": 5}))
	for end := time.Now().Add(testTimeout); ; time.Sleep(100 * time.Millisecond) {
		info, err := lib.DescribeGroup(ctx, servers, group)
		assigned := 0
		for i := 0; err == nil && i < len(info.Members); i++ {
			if m := info.Members[i]; len(m.Assignment) == 1 && (m.ClientID == "java-share" || m.ClientID == "kafkabpl") {
				assigned++
			}
		}
		if assigned == 2 {
			break
		}
		if peer.exited() || time.Now().After(end) {
			t.Fatalf("the share group did not assign the partition to Java's member and kafkabpl's: %+v %v\n%s", info, err, peer)
		}
	}

	// javaGot is what the Java member printed so far.
	javaGot := func() []sharedMsg {
		var got []sharedMsg
		for line := range strings.Lines(peer.stdout.String()) {
			var m sharedMsg
			if _, err := fmt.Sscanf(line, "got %s %d", &m.value, &m.deliveries); err == nil {
				got = append(got, m)
			}
		}
		return got
	}
	var mine []sharedMsg
	done := make(chan struct{})
	go func() {
		defer close(done)
		for end := time.Now().Add(testTimeout); time.Now().Before(end) && len(mine)+len(javaGot()) < n; {
			msgs, err := pollShared(ctx, lib, c, 200*time.Millisecond)
			if err != nil {
				t.Error(err)
				return
			}
			mine = append(mine, msgs...)
		}
	}()
	p := newProducer(t, lib, ctx, servers)
	for i := 0; i < n; i += 5 {
		ok[int](t)(lib.Send(ctx, p, []string{topic}, textMessages(fmt.Sprint(i), fmt.Sprint(i+1), fmt.Sprint(i+2), fmt.Sprint(i+3), fmt.Sprint(i+4))))
	}
	<-done
	noErr(t, lib.Commit(ctx, c))
	noErr(t, peer.stdin.Close()) // Java's member commits and leaves
	if err := peer.wait(ctx); err != nil {
		t.Fatalf("Java's share consumer: %v\n%s", err, peer)
	}
	theirs := javaGot()
	seen := map[string]string{}
	for who, msgs := range map[string][]sharedMsg{"kafkabpl": mine, "Java": theirs} {
		for _, m := range msgs {
			if prev, dup := seen[m.value]; dup {
				t.Errorf("%s delivered twice, to %s and %s", m.value, prev, who)
			}
			seen[m.value] = who
			if m.deliveries != 1 {
				t.Errorf("%s: delivery count %d at %s, want 1", m.value, m.deliveries, who)
			}
		}
	}
	if len(seen) != n || len(mine) == 0 || len(theirs) == 0 {
		t.Fatalf("%d of %d delivered: %d to kafkabpl, %d to Java", len(seen), n, len(mine), len(theirs))
	}
	t.Logf("split: %d to kafkabpl, %d to Java", len(mine), len(theirs))
	if info := ok[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(ctx, servers, group)); info.TotalLag != 0 {
		t.Errorf("after both committed: %s", value.Format(info.List()))
	}
}
