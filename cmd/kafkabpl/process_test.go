//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// buildBinary builds the command into a temporary directory, with the
// build tags given (none: as go install builds it).
func buildBinary(t *testing.T, tags ...string) string {
	t.Helper()
	return buildInto(t, t.TempDir(), "kafkabpl", ".", tags...)
}

// buildInto builds the command pkg (a directory) into dir as name, with
// the build tags given, and returns its path.
func buildInto(t *testing.T, dir, name, pkg string, tags ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build kafkabpl with")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	out, err := exec.CommandContext(ctx, goBin, append(args, pkg)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// brokerProc is a running "kafkabpl broker" process.
type brokerProc struct {
	cmd     *exec.Cmd
	stderr  *syncBuffer
	exited  chan struct{} // closed once Wait returned
	addrs   []string
	waitErr error
}

func startBrokerProc(t *testing.T, bin string, args ...string) *brokerProc {
	t.Helper()
	p := &brokerProc{stderr: new(syncBuffer), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"broker"}, args...)...)
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		// Drain, so that Wait (which closes the pipe) never blocks us.
		io.Copy(io.Discard, stdout)
	}()
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})

	select {
	case line, ok := <-lines:
		servers, found := strings.CutPrefix(line, "listening on ")
		if !ok || !found {
			p.cmd.Process.Kill()
			<-p.exited
			t.Fatalf("broker printed %q, want listening on ...; stderr:\n%s", line, p.stderr)
		}
		p.addrs = strings.Split(servers, ",")
	case <-time.After(testTimeout):
		t.Fatalf("broker did not print where it listens; stderr:\n%s", p.stderr)
	}
	return p
}

// stop sends sig and returns the exit status (-1 when killed by a signal).
func (p *brokerProc) stop(t *testing.T, sig os.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
	select {
	case <-p.exited:
	case <-time.After(testTimeout):
		t.Fatalf("broker did not exit on %v; stderr:\n%s", sig, p.stderr)
	}
	var ee *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &ee) {
		t.Fatalf("wait: %v", p.waitErr)
	}
	return p.cmd.ProcessState.ExitCode()
}

func keyedRecords(topic string, from, to int) []*kgo.Record {
	var rs []*kgo.Record
	for i := from; i < to; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "sensor-%d", i), Value: fmt.Appendf(nil, "reading %d", i)})
	}
	return rs
}

// recordsAt is where records are: partition and value by key.
func recordsAt(rs []*kgo.Record) map[string]string {
	m := make(map[string]string, len(rs))
	for _, r := range rs {
		m[string(r.Key)] = fmt.Sprintf("p%d %s", r.Partition, r.Value)
	}
	return m
}

// TestBrokerProcessPersistence runs the built command: records, a topic's
// partition count and a group's committed offsets survive SIGTERM and a
// restart; after SIGKILL, records, commits and topics survive, a topic
// created on first use right before the kill included.
func TestBrokerProcessPersistence(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	const topic, group = "readings", "dashboard"

	// 1. Produce and commit, then SIGTERM.
	p := startBrokerProc(t, bin, "--port", "0", "--data-dir", dir, "--partitions", "2")
	if len(p.addrs) != 3 {
		t.Errorf("listening on %q, want 3 brokers by default", p.addrs)
	}
	prod := newClient(t, p.addrs, kgo.AllowAutoTopicCreation())
	results := prod.ProduceSync(ctx, keyedRecords(topic, 0, 20)...)
	if err := results.FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	var produced []*kgo.Record
	for _, r := range results {
		produced = append(produced, r.Record)
	}
	prod.Close()
	groupConsume(t, ctx, p.addrs, topic, group, 20)
	committed := fetchCommitted(t, ctx, p.addrs, group)
	if sumOffsets(committed) != 20 {
		t.Fatalf("committed %s, want 20 in all", committed)
	}
	if code := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d on SIGTERM, want 0; stderr:\n%s", code, p.stderr)
	}

	// 2. Restart (default --partitions 1): all is back.
	p = startBrokerProc(t, bin, "--port", "0", "--data-dir", dir)
	adm := newAdmin(t, p.addrs)
	checkTopic(t, ctx, adm, topic, 2, 20)
	if got := fetchCommitted(t, ctx, p.addrs, group); got != committed {
		t.Errorf("after restart committed %s, want %s", got, committed)
	}
	if got, want := readAll(t, ctx, p.addrs, topic, 20), recordsAt(produced); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after restart records %v, want %v", got, want)
	}

	// 3. More records and commits, an explicitly created topic, then an
	// auto-created one last; then SIGKILL.
	prod = newClient(t, p.addrs, kgo.AllowAutoTopicCreation())
	results = prod.ProduceSync(ctx, keyedRecords(topic, 20, 30)...)
	if err := results.FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	for _, r := range results {
		produced = append(produced, r.Record)
	}
	// The group resumes after its commit: exactly the 10 new records.
	for _, r := range groupConsume(t, ctx, p.addrs, topic, group, 10) {
		var i int
		if _, err := fmt.Sscanf(string(r.Key), "sensor-%d", &i); err != nil || i < 20 {
			t.Errorf("group resumed with old record %s", r.Key)
		}
	}
	committed = fetchCommitted(t, ctx, p.addrs, group)
	if sumOffsets(committed) != 30 {
		t.Fatalf("committed %s, want 30 in all", committed)
	}
	if _, err := adm.CreateTopic(ctx, 3, -1, nil, "made"); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	if err := prod.ProduceSync(ctx, keyedRecords("made", 0, 5)...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if err := prod.ProduceSync(ctx, keyedRecords("fresh", 0, 1)...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	prod.Close()
	if code := p.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("exit %d on SIGKILL, want -1 (killed)", code)
	}

	// 4. Restart after the crash.
	p = startBrokerProc(t, bin, "--port", "0", "--data-dir", dir)
	adm = newAdmin(t, p.addrs)
	checkTopic(t, ctx, adm, topic, 2, 30)
	if got, want := readAll(t, ctx, p.addrs, topic, 30), recordsAt(produced); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after SIGKILL records %v, want %v", got, want)
	}
	if got := fetchCommitted(t, ctx, p.addrs, group); got != committed {
		t.Errorf("after SIGKILL committed %s, want %s", got, committed)
	}
	checkTopic(t, ctx, adm, "made", 3, 5)
	// The topic created on first use by the last send before the kill.
	checkTopic(t, ctx, adm, "fresh", 1, 1)
	if code := p.stop(t, syscall.SIGINT); code != 0 {
		t.Errorf("exit %d on SIGINT, want 0; stderr:\n%s", code, p.stderr)
	}
}

// groupConsume consumes n records as a member of group and commits them.
func groupConsume(t *testing.T, ctx context.Context, addrs []string, topic, group string, n int) []*kgo.Record {
	t.Helper()
	cl := newClient(t, addrs, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	rs := consumeN(t, ctx, cl, n)
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	cl.Close() // leaves the group
	return rs
}

// fetchCommitted returns the group's commits as "topic/partition=offset ...".
func fetchCommitted(t *testing.T, ctx context.Context, addrs []string, group string) string {
	t.Helper()
	offsets, err := newAdmin(t, addrs).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	var parts []string
	for _, o := range offsets.Sorted() {
		if o.Err != nil {
			t.Fatalf("offset %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		parts = append(parts, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.At))
	}
	return strings.Join(parts, " ")
}

func sumOffsets(committed string) int64 {
	var sum int64
	for f := range strings.FieldsSeq(committed) {
		var n int64
		fmt.Sscan(f[strings.LastIndexByte(f, '=')+1:], &n)
		sum += n
	}
	return sum
}

// checkTopic checks a topic's partition count and its number of records.
func checkTopic(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, partitions int, records int64) {
	t.Helper()
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	if td := tds[topic]; td.Err != nil || len(td.Partitions) != partitions {
		t.Errorf("topic %s: %d partitions (err %v), want %d", topic, len(td.Partitions), td.Err, partitions)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	if n != records {
		t.Errorf("topic %s holds %d records, want %d", topic, n, records)
	}
}

// readAll reads a topic's n records from the start, without a group.
func readAll(t *testing.T, ctx context.Context, addrs []string, topic string, n int) map[string]string {
	t.Helper()
	cl := newClient(t, addrs, kgo.ConsumeTopics(topic), kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	return recordsAt(consumeN(t, ctx, cl, n))
}
