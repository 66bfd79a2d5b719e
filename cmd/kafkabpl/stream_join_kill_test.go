//go:build unix

package main

// The crash tests of joins (issue 34): a stateful stream that joins each
// input with a global table, a compacted "registry" topic mapping each
// key kK to its site gS (S = K mod joinSites), is killed with SIGKILL
// mid-run, and its results must still be exact. It is the counts
// scenario of TestStreamStateCrash (keys k0..k39, 150 inputs each, fed as
// the stream goes) with the joined site appended to each output: "kK=COUNT
// kK-SEQ site=gS". Each process reads the table whole before its first
// input (a global table is not restored from a changelog but read from
// its topic), so a restarted process, and a survivor taking over a killed
// one's partitions, join exactly as the first did.
//
//   - restart: one process killed mid-run, then a second, which restores
//     the counts and finishes;
//   - two in group, one killed: the survivor takes the killed one's
//     partitions over.
//
// Every key's outputs must be counts 1..150 in order, each once, and each
// must carry the key's site.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const joinSites = 5

// joinScript counts inputs per key and appends the joined site: args
// config's group, table topic, from, to, throttle.
const joinScript = `(kafka-stream ` + stateConfig + `
  "tables" => ("sites" => %q) "join" => "sites"
  "from" => %q "to" => %q "store" => "counts"
  "transform" => (function (in state)
    (when (= 0 (mod (get in "offset") %d)) (sleep 1))
    (local n)
    (set n (+ state 1))
    (kafka-state n (concat (get in "key") "=" n " " (get in "value") " site=" (get in "joined")))))
`

func TestStreamJoinKill(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	scenarios := map[string]func(*testing.T, *stateRig){
		"restart":                  stateRestart,
		"two in group, one killed": stateTwoOneKilled,
	}
	tests := map[string]func(*testing.T){}
	for name, run := range scenarios {
		tests[name] = func(t *testing.T) {
			start := time.Now()
			b := startBrokerProc(t, bin, "--port", "0", "--brokers", "1", "--no-auto-create")
			r := seedJoinRig(t, bin, b.addrs, "")
			run(t, r)
			checkJoinedCounts(t, r)
			t.Logf("took %v", time.Since(start).Round(time.Millisecond))
		}
	}
	concurrently(t, tests)
}

// seedJoinRig creates the registry table (compacted) on the brokers at
// addrs and fills it, then seeds the counts scenario (topics named with
// prefix) with the join script.
func seedJoinRig(t *testing.T, bin string, addrs []string, prefix string) *stateRig {
	t.Helper()
	table := prefix + "registry"
	adm := newAdmin(t, addrs)
	compact := "compact"
	ctx := t.Context()
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"cleanup.policy": &compact}, table); err != nil {
		t.Fatalf("create topic %s: %v", table, err)
	}
	var rows []*kgo.Record
	for k := range countKeys {
		rows = append(rows, &kgo.Record{Topic: table, Key: fmt.Appendf(nil, "k%d", k), Value: fmt.Appendf(nil, "g%d", k%joinSites)})
	}
	if err := newClient(t, addrs).ProduceSync(ctx, rows...).FirstErr(); err != nil {
		t.Fatalf("fill the table: %v", err)
	}
	r := seedStateRig(t, bin, "exactly-once", addrs, prefix, false)
	r.script = filepath.Join(t.TempDir(), "join.bpl")
	writeFile(t, r.script, fmt.Sprintf(joinScript, r.group, table, r.in, r.out, stateThrottle))
	return r
}

// checkJoinedCounts reads the output read_committed, checks that each
// output ends with its key's site, and checks the counts without it.
func checkJoinedCounts(t *testing.T, r *stateRig) {
	t.Helper()
	recs := readCommitted(t, r.ctx, r.addrs, r.out, countInputs)
	e := &errorLimit{t: t}
	for _, rec := range recs {
		var k int
		if _, err := fmt.Sscanf(string(rec.Key), "k%d", &k); err != nil {
			e.errorf("output %d@%d: key %q, want kK", rec.Partition, rec.Offset, rec.Key)
			continue
		}
		suffix := fmt.Sprintf(" site=g%d", k%joinSites)
		v, ok := strings.CutSuffix(string(rec.Value), suffix)
		if !ok {
			e.errorf("output %d@%d: value %q under key %s does not end with %q: the join missed the table", rec.Partition, rec.Offset, rec.Value, rec.Key, suffix)
		}
		rec.Value = []byte(v)
	}
	checkCounts(t, recs, true)
}
