//go:build unix

package main

// TestRealKafkaStreamState runs TestStreamStateCrash's exactly-once
// scenarios on a real Apache Kafka broker of its own (startKafka's, as
// TestRealKafkaStream does): the counts and the windows killed with
// SIGKILL mid-run and restarted, in memory and with their state on disk
// (then restarted once more after a SIGTERM, which applies no changelog
// record), and the windows with a second process
// joining mid-run; and TestStreamKills's repeated kills of the counts'
// processes. The changelog topics are created by the streams on the
// real broker, compacted. After a kill, the restore of the killed
// process's partitions and read_committed readers wait for the broker to
// abort its open transaction: the scripts' 10 s transaction timeout plus
// up to Kafka's 10 s sweep. Without java or the jars it skips, saying how
// to get them; with CI set it fails.

import (
	"testing"
	"time"
)

func TestRealKafkaStreamState(t *testing.T) {
	t.Parallel()
	java := needKafka(t)
	bin := buildBinary(t)
	k := startKafka(t, java)
	tests := map[string]func(*testing.T){}
	add := func(name, prefix string, windows bool, run func(*testing.T, *stateRig)) {
		tests[name] = func(t *testing.T) {
			start := time.Now()
			r := seedStateRig(t, bin, "exactly-once", []string{k.servers}, prefix, windows)
			run(t, r)
			r.check(t)
			t.Logf("took %v", time.Since(start).Round(time.Millisecond))
		}
	}
	add("counts/restart", "counts-restart-", false, stateRestart)
	add("windows/restart", "windows-restart-", true, stateRestart)
	add("windows/second joins", "windows-joins-", true, stateSecondJoins)
	add("counts/restart, state on disk", "counts-disk-", false, stateRestartOnDisk)
	add("windows/restart, state on disk", "windows-disk-", true, stateRestartOnDisk)
	tests["counts/repeated kills"] = func(t *testing.T) { streamKills(t, bin, []string{k.servers}, "counts-kills-") }
	concurrently(t, tests)
}
