package kafkabpl

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientLogger writes franz-go's own log for one handle, at the config's
// "log-level", one line per entry: "kafka-client: HANDLE LEVEL message
// key=value ...".
// It is what to read when a client seems stuck: connections, retries,
// metadata refreshes, leader moves and group joins.
type clientLogger struct {
	level kgo.LogLevel
	id    string
	write func(string)
}

func (l *clientLogger) Level() kgo.LogLevel { return l.level }

func (l *clientLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", l.id, level, msg)
	for i := 0; i+1 < len(keyvals); i += 2 {
		fmt.Fprintf(&b, " %v=%v", keyvals[i], keyvals[i+1])
	}
	l.write(b.String())
}
