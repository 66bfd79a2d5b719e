// Package scripttest holds what kafkabpl test and kafkabpl-test say of
// themselves. kafkabpl-test (cmd/kafkabpl-test) runs BPL test scripts in
// virtual time (package streamtest) and must be built with franz-go's
// synctests tag (go install -tags synctests ./cmd/kafkabpl-test);
// kafkabpl test runs it. kafkabpl itself is built without the tag, whose
// channel-based locks make franz-go's produce path about a third slower
// (BENCHMARKS.md, "The synctests build tag"), and imports only this
// package of the test machinery: no testing, no streamtest.
package scripttest

// About is what the test command does, for its --help.
const About = `Runs BPL test scripts in virtual time, each on a fresh in-memory cluster
whose clock moves only when the script says (package streamtest): an hour
of windows or a ten-minute silence takes a moment. Besides brain4it's core
library and the kafka- functions (kafka-servers names the cluster), a test
script has:

  (advance ms)                    the virtual clock moves on by ms; what the
                                  streams do meanwhile is done
  (read-topic topic [key v ...])  what a read_committed consumer has read of
                                  topic so far, as (key => value ...); config
                                  keys as kafka-create takes them, read at the
                                  first call ("value-deserializer" => "JSON")
  (assert-equal got want [what])  passes when got equals want as BPL's = says
                                  (3 equals 3.0; names are not compared)

It prints a line per assertion ("ok   what", or "FAIL what" with both
values), each script's errors (an exception it threw, a stream that failed)
and a summary line per script, then PASS or FAIL; -v adds the library's
log. A script's name is its file's base name without .bpl. Exit status: 0
when every script passed, 1 when one failed (an assertion, an exception, a
failed stream) or -run matched none, 2 on a usage error.`

// NoTag is what a build without the synctests tag says, and how to get
// one.
const NoTag = "kafkabpl-test: built without franz-go's synctests build tag, which virtual time needs: install it with go install -tags synctests ./cmd/kafkabpl-test"
