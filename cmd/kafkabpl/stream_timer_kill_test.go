//go:build unix

package main

// The crash tests of timers (issue 34): a stateful stream's silences,
// kept with the state in the changelog, fire exactly once across a
// SIGKILL of `kafkabpl run`. The script is a watchdog: it keeps each
// device's last reading (key dK, value "r-dK") and, once a device had no
// reading for the rig's silence (timerSilenceMs here, 10 s on the real
// broker), its "on-timer" writes the alarm "alarm dK
// p=PARTITION at=DUE last=r-dK". A spawned loop of the script prints the
// stream's status every 100 ms, "status TIMERS FIRED RESTORING": the
// timers pending in its heaps, the calls it committed and the partitions
// it is restoring. Each scenario runs its own `kafkabpl broker` process
// (kfake, one broker), side by side.
//
//   - due while down: one process gets a reading per device and is killed
//     before their silences are due; a second process of the group starts
//     after they are due, restores the state and fires each alarm once
//     (its status says so), with the due time the first process set.
//   - two in group, one killed: two processes share the group; readings
//     come one after another, and one process is killed once it has
//     committed an alarm while it still holds silent-pending keys. The
//     survivor takes its partitions over; every device's alarm comes once.
//
// A read_committed reader of the alarms checks, after the survivor's
// SIGTERM, one alarm per device and nothing else, in the reading's
// partition; the processes' committed outputs (their stop line's
// "produced") must add up with it. The status's "fired" only bounds them
// from below: a call leaves the heaps before its transaction commits.

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	timerPartitions = 4
	timerSilenceMs  = 5000
)

// timerScript is the watchdog: args group, client id, from, to, silence.
// The status loop is bounded (10 minutes); SIGTERM ends it sooner.
const timerScript = `(set s (kafka-stream (list "servers" => kafka-servers "group" => %q "client-id" => %q
    "session-timeout" => 6000 "heartbeat-interval" => 1000 "max-poll-records" => 100
    "transaction-timeout" => 10000 "log-level" => "info")
  "from" => %q "to" => %q "store" => "last-seen"
  "transform" => (function (in last) (kafka-state (get in "value")))
  "silence" => %d
  "on-timer" => (function (timer last)
    (kafka-state last (concat "alarm " (get timer "key") " p=" (get timer "partition") " at=" (get timer "at") " last=" last)))))
(set i 0)
(spawn (while (< i 6000)
  (set st (get (kafka-stream-status s) "store"))
  (print "status" (get st "timers") (get st "fired") (get st "restoring"))
  (sleep 100)
  (set i (+ i 1))))
`

// statusLine is what the script's loop prints.
var statusLine = regexp.MustCompile(`(?m)^status ([0-9]+) ([0-9]+) ([0-9]+)$`)

// timerStatus is a process's latest status line.
type timerStatus struct {
	ok                       bool // a line came
	timers, fired, restoring int64
}

func (s timerStatus) String() string {
	if !s.ok {
		return "no status yet"
	}
	return fmt.Sprintf("%d timers pending, %d fired, %d partitions restoring", s.timers, s.fired, s.restoring)
}

// latestStatus is p's latest status line.
func latestStatus(p *peerProc) timerStatus {
	ms := statusLine.FindAllStringSubmatch(p.stdout.String(), -1)
	if len(ms) == 0 {
		return timerStatus{}
	}
	m := ms[len(ms)-1]
	n := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	return timerStatus{ok: true, timers: n(m[1]), fired: n(m[2]), restoring: n(m[3])}
}

// timerRig is a watchdog scenario: the crash rig's broker, topics and
// group, and the readings sent.
type timerRig struct {
	*crashRig
	devices int
	silence time.Duration          // the script's "silence"
	sent    map[string]sentReading // by device
}

type sentReading struct {
	partition int32
	at        time.Time // before it was produced
}

func TestStreamTimerKills(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	concurrently(t, map[string]func(*testing.T){
		"due while down": func(t *testing.T) {
			b := startBrokerProc(t, bin, "--port", "0", "--brokers", "1", "--no-auto-create")
			timerDueWhileDown(t, newTimerRig(t, bin, b.addrs, "", 8))
		},
		"two in group, one killed": func(t *testing.T) {
			b := startBrokerProc(t, bin, "--port", "0", "--brokers", "1", "--no-auto-create")
			timerTwoOneKilled(t, newTimerRig(t, bin, b.addrs, "", 40))
		},
	})
}

// newTimerRig creates the readings and alarms topics (named with prefix)
// on the brokers at addrs.
func newTimerRig(t *testing.T, bin string, addrs []string, prefix string, devices int) *timerRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	t.Cleanup(cancel)
	r := &timerRig{crashRig: &crashRig{bin: bin, guarantee: "exactly-once", addrs: addrs, servers: addrs[0], ctx: ctx,
		adm: newAdmin(t, addrs), in: prefix + "readings", out: prefix + "alarms", group: prefix + "watchdog"},
		devices: devices, silence: timerSilenceMs * time.Millisecond, sent: map[string]sentReading{}}
	for _, topic := range []string{r.in, r.out} {
		if _, err := r.adm.CreateTopic(ctx, timerPartitions, 1, nil, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	return r
}

// startAs starts a watchdog process with client id client.
func (r *timerRig) startAs(t *testing.T, client string) *peerProc {
	t.Helper()
	script := filepath.Join(t.TempDir(), client+".bpl")
	writeFile(t, script, fmt.Sprintf(timerScript, r.group, client, r.in, r.out, r.silence.Milliseconds()))
	p := startPeer(t, context.Background(), r.bin, "run", "--servers", r.servers, script)
	t.Logf("%s process started (pid %d)", client, p.cmd.Process.Pid)
	return p
}

// send produces device k's reading.
func (r *timerRig) send(t *testing.T, cl *kgo.Client, k int) {
	t.Helper()
	at := time.Now()
	dev := fmt.Sprintf("d%d", k)
	rec := &kgo.Record{Topic: r.in, Key: []byte(dev), Value: []byte("r-" + dev)}
	if err := cl.ProduceSync(r.ctx, rec).FirstErr(); err != nil {
		t.Errorf("send %s's reading: %v", dev, err)
		return
	}
	r.sent[dev] = sentReading{partition: rec.Partition, at: at}
}

// waitStatus waits (90 s at most) until p's status satisfies done,
// failing if p exits meanwhile.
func waitStatus(t *testing.T, what string, p *peerProc, done func(timerStatus) bool) timerStatus {
	t.Helper()
	start := time.Now()
	for {
		st := latestStatus(p)
		if st.ok && done(st) {
			t.Logf("%s: %s, after %v", what, st, time.Since(start).Round(time.Millisecond))
			return st
		}
		if p.exited() {
			t.Fatalf("%s: the process exited: %v\n%s", what, p.err, p)
		}
		if time.Since(start) > 90*time.Second {
			t.Fatalf("%s: not so after %v: %s\n%s", what, time.Since(start).Round(time.Millisecond), st, p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// endOffsets is how many records topic holds, committed or not (control
// records included); -1 when the broker did not say.
func (r *timerRig) endOffsets(topic string) int64 {
	ctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
	defer cancel()
	ends, err := r.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return -1
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// timerDueWhileDown: the silences come due while the only process is
// down; the next one fires them once.
func timerDueWhileDown(t *testing.T, r *timerRig) {
	p1 := r.startAs(t, "first")
	r.waitMembers(t, 1, p1)
	cl := newClient(t, r.addrs)
	for k := range r.devices {
		r.send(t, cl, k)
	}
	first := r.sent["d0"].at
	at := r.waitCommitted(t, "every reading committed", func(n int64) bool { return n == int64(r.devices) }, p1)
	st := latestStatus(p1)
	r.kill(t, p1, at)
	killed := time.Now()
	if due := first.Add(r.silence); !killed.Before(due) {
		t.Fatalf("the kill came %v after the first silence was due: the machine is too slow for this test's %v silence", killed.Sub(due), r.silence)
	}
	if n := r.endOffsets(r.out); n != 0 {
		t.Fatalf("the alarms topic holds %d records before the silences were due (the first process's last status: %s)", n, st)
	}
	t.Logf("killed with %d readings committed and no alarm written; the first process's last status: %s", at, st)

	// Start the next process once every silence is due, by the latest
	// time the killed one can have seen a reading.
	dueBy := killed.Add(r.silence + 500*time.Millisecond)
	time.Sleep(time.Until(dueBy))
	p2 := r.startAs(t, "second")
	started := time.Now()
	waitStatus(t, "the second process fired every alarm", p2, func(s timerStatus) bool {
		return s.fired >= int64(r.devices) && s.timers == 0 && s.restoring == 0
	})
	restored := storeRestores(p2)
	final := latestStatus(p2)
	if processed := r.term(t, p2); processed != 0 {
		t.Errorf("the second process processed %d readings, want 0: all were committed before the kill", processed)
	}
	if produced := producedBy(p2); final.fired != int64(r.devices) || produced != int64(r.devices) {
		t.Errorf("the second process fired %d alarms and produced %d outputs, want %d", final.fired, produced, r.devices)
	}
	if restored <= 0 {
		t.Errorf("the second process restored no changelog records\n%s", p2)
	} else {
		t.Logf("the second process restored %d changelog records", restored)
	}
	alarms := r.checkAlarms(t)
	silence := r.silence.Milliseconds()
	for dev, a := range alarms {
		if a.at > started.UnixMilli() {
			t.Errorf("%s's alarm is due at %d, after the second process started (%d): it was not due while the process was down", dev, a.at, started.UnixMilli())
		}
		if s := r.sent[dev]; a.at < s.at.UnixMilli()+silence || a.at > killed.UnixMilli()+silence {
			t.Errorf("%s's alarm is due at %d, want the reading's processing time plus %d ms: from %d to %d", dev, a.at, silence,
				s.at.UnixMilli()+silence, killed.UnixMilli()+silence)
		}
	}
}

// timerTwoOneKilled: two processes share the group; one is killed while
// it holds silent-pending keys, after it committed an alarm.
func timerTwoOneKilled(t *testing.T, r *timerRig) {
	p1 := r.startAs(t, "first")
	p2 := r.startAs(t, "second")
	r.waitMembers(t, 2, p1, p2)
	held := r.assigned(t, "first")
	// A reading every 150 ms (for a 5 s silence): the silences come due
	// one after another while readings still come.
	pace := r.silence / 33
	cl := newClient(t, r.addrs)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for k := range r.devices {
			select {
			case <-r.ctx.Done():
				return
			case <-time.After(pace):
			}
			r.send(t, cl, k)
		}
	}()
	st := waitStatus(t, "the first process committed an alarm", p1, func(s timerStatus) bool { return s.fired >= 1 })
	if st.timers == 0 {
		t.Fatalf("the first process has no timer pending (%s): the readings ran out before it fired; send them slower", st)
	}
	r.kill(t, p1, 0)
	kill := time.Now()
	t.Logf("killed the first process (partitions %v) at %s", held, st)
	<-sent
	r.waitMembers(t, 1, p2)
	r.waitAlarms(t, p2)
	waitStatus(t, "the survivor has no timer left", p2, func(s timerStatus) bool { return s.timers == 0 && s.restoring == 0 })
	final := latestStatus(p2)
	if processed := r.term(t, p2); processed <= 0 {
		t.Errorf("the survivor processed %d readings", processed)
	}
	alarms := r.checkAlarms(t)
	// The alarms the survivor committed (its outputs: the readings have
	// none), and those the first process said it committed, are the
	// devices' alarms, none twice.
	produced := producedBy(p2)
	if produced < final.fired || produced+st.fired > int64(len(alarms)) {
		t.Errorf("the survivor produced %d alarms (its status said %d fired) and the first process %d at least: want %d at most in all", produced, final.fired, st.fired, len(alarms))
	}
	// The killed process's pending keys: readings on its partitions,
	// sent within the silence before the kill, or after it.
	pending := 0
	for dev, s := range r.sent {
		if slices.Contains(held, s.partition) && s.at.Add(r.silence).After(kill) {
			pending++
			if a, ok := alarms[dev]; ok && a.partition != s.partition {
				t.Errorf("%s's alarm says partition %d, its reading went to %d", dev, a.partition, s.partition)
			}
		}
	}
	t.Logf("the survivor fired %d alarms; %d devices of the killed process's partitions %v were silent-pending at the kill", produced, pending, held)
	if pending == 0 {
		t.Errorf("no device of the killed process's partitions %v was silent-pending at the kill: the scenario did not happen", held)
	}
}

// assigned is the input partitions client's member holds.
func (r *timerRig) assigned(t *testing.T, client string) []int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	groups, err := r.adm.DescribeGroups(ctx, r.group)
	if err != nil {
		t.Fatalf("describe group: %v", err)
	}
	var parts []int32
	for _, m := range groups[r.group].Members {
		if c, ok := m.Assigned.AsConsumer(); ok && m.ClientID == client {
			for _, tp := range c.Topics {
				if tp.Topic == r.in {
					parts = append(parts, tp.Partitions...)
				}
			}
		}
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		t.Fatalf("%s holds no partition of %s: %+v", client, r.in, groups[r.group])
	}
	return parts
}

// waitAlarms waits (90 s at most) until a read_committed reader has seen
// an alarm of every device sent a reading; past the deadline it fails,
// naming the devices without one, with the survivor p's log.
func (r *timerRig) waitAlarms(t *testing.T, p *peerProc) {
	t.Helper()
	cl := newClient(t, r.addrs, kgo.ConsumeTopics(r.out), kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	defer cl.Close()
	seen := map[string]bool{}
	start := time.Now()
	for len(seen) < len(r.sent) {
		if time.Since(start) > 90*time.Second {
			var missing []string
			for dev, s := range r.sent {
				if !seen[dev] {
					missing = append(missing, fmt.Sprintf("%s (partition %d, sent at %s)", dev, s.partition, s.at.Format("15:04:05.000")))
				}
			}
			slices.Sort(missing)
			t.Fatalf("after %v, no alarm for %d devices: %s; the survivor's status: %s\n%s", time.Since(start).Round(time.Millisecond),
				len(missing), strings.Join(missing, ", "), latestStatus(p), p.stderr)
		}
		pctx, cancel := context.WithTimeout(r.ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		for _, rec := range fs.Records() {
			seen[string(rec.Key)] = true
		}
	}
	t.Logf("every device's alarm committed after %v", time.Since(start).Round(time.Millisecond))
}

// storeLine is what a stream process logs for each partition of its store
// it restored.
var storeLine = regexp.MustCompile(`store "[a-z-]+" partition [0-9]+ restored: ([0-9]+) changelog records`)

// storeRestores is how many changelog records p says it restored.
func storeRestores(p *peerProc) (n int64) {
	for _, m := range storeLine.FindAllStringSubmatch(p.stderr.String(), -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		n += v
	}
	return n
}

// producedBy is how many outputs p's stream committed, as it said when it
// stopped; -1 if it did not say.
func producedBy(p *peerProc) int64 {
	m := stopLine.FindStringSubmatch(p.stderr.String())
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(m[2], 10, 64)
	return n
}

// alarm is an alarm read.
type alarm struct {
	partition int32
	at        int64
}

// checkAlarms reads the alarms, read_committed, and checks one per device
// sent a reading, and nothing else: "alarm dK p=P at=DUE last=r-dK" under
// key dK, in the reading's partition.
func (r *timerRig) checkAlarms(t *testing.T) map[string]alarm {
	t.Helper()
	recs := readCommitted(t, r.ctx, r.addrs, r.out, r.devices)
	got := map[string]alarm{}
	for _, rec := range recs {
		var dev, last string
		var a alarm
		_, err := fmt.Sscanf(string(rec.Value), "alarm %s p=%d at=%d last=%s", &dev, &a.partition, &a.at, &last)
		s, sent := r.sent[dev]
		switch {
		case err != nil || string(rec.Key) != dev || last != "r-"+dev:
			t.Errorf("alarm %s=%q at %d/%d: want \"alarm dK p=P at=DUE last=r-dK\" under key dK (%v)", rec.Key, rec.Value, rec.Partition, rec.Offset, err)
		case !sent:
			t.Errorf("alarm %q: no reading of %s was sent", rec.Value, dev)
		case a.partition != s.partition || rec.Partition != s.partition:
			t.Errorf("alarm %q in partition %d: the reading went to partition %d", rec.Value, rec.Partition, s.partition)
		}
		if prev, dup := got[dev]; dup {
			t.Errorf("%s's alarm twice: %+v and %q", dev, prev, rec.Value)
		}
		got[dev] = a
	}
	if len(recs) != r.devices || len(got) != r.devices {
		var devs []string
		for dev := range got {
			devs = append(devs, dev)
		}
		slices.Sort(devs)
		t.Errorf("%d alarms for %d devices (%s), want one for each of %d", len(recs), len(got), strings.Join(devs, " "), r.devices)
	}
	t.Logf("read %d alarms, read_committed, one per device", len(recs))
	return got
}
