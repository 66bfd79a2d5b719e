//go:build unix

package main

// TestRealKafkaStreamTimers runs issue 34's crash tests of timers and
// re-keying on a real Apache Kafka broker of its own (startKafka's, as
// TestRealKafkaStreamState does): TestStreamTimerKills's scenarios, a
// silence due while its only process is down and two processes sharing a
// watchdog with one killed while keys are silent-pending, with a silence
// of 10 s rather than 5 (a loaded machine's first transaction on a real
// broker may take seconds, and the first scenario's kill must come
// before the silences are due); TestStreamRekeyKill's counts per site
// killed mid-flow and restarted; TestStreamJoinKill's restart of a
// count joined with a global table; and TestStreamIntervalJoinKill's. After a kill, the restore of the killed
// process's partitions and read_committed readers wait for the broker to
// abort its open transaction: the scripts' 10 s transaction timeout plus
// up to Kafka's 10 s sweep. Without java or the jars it skips, saying how
// to get them; with CI set it fails.

import (
	"testing"
	"time"
)

// realTimerSilence is the watchdog's silence on the real broker.
const realTimerSilence = 10 * time.Second

func TestRealKafkaStreamTimers(t *testing.T) {
	t.Parallel()
	java := needKafka(t)
	bin := buildBinary(t)
	k := startKafka(t, java)
	addrs := []string{k.servers}
	concurrently(t, map[string]func(*testing.T){
		"timers/due while down": func(t *testing.T) {
			r := newTimerRig(t, bin, addrs, "timer-down-", 8)
			r.silence = realTimerSilence
			timerDueWhileDown(t, r)
		},
		"timers/two in group, one killed": func(t *testing.T) {
			r := newTimerRig(t, bin, addrs, "timer-two-", 40)
			r.silence = realTimerSilence
			timerTwoOneKilled(t, r)
		},
		"join/restart": func(t *testing.T) {
			start := time.Now()
			r := seedJoinRig(t, bin, addrs, "join-")
			stateRestart(t, r)
			checkJoinedCounts(t, r)
			t.Logf("took %v", time.Since(start).Round(time.Millisecond))
		},
		"interval join/restart": func(t *testing.T) { intervalKillRestart(t, bin, addrs, "real-") },
		"rekey/restart": func(t *testing.T) {
			start := time.Now()
			rekeyRestart(t, seedRekeyRig(t, bin, addrs, "rekey-"))
			t.Logf("took %v", time.Since(start).Round(time.Millisecond))
		},
	})
}
