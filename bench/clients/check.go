package main

import (
	"bytes"
	"fmt"
	"time"
)

// checker checks the records read from one topic of one partition: the
// right topic and partition, keys 0, 1, 2 ... in order (so no record is
// lost, repeated or reordered), each with the value sent, and, at the
// end, exactly the number expected.
type checker struct {
	p     *params
	topic string
	want  int
	got   int
	last  time.Time // when the last record expected was checked
}

func newChecker(p *params, topic string, want int) *checker {
	return &checker{p: p, topic: topic, want: want}
}

func (c *checker) record(topic string, partition int32, key, value []byte) error {
	if topic != c.topic || partition != 0 {
		return fmt.Errorf("record %d: from %s/%d, want %s/0", c.got, topic, partition, c.topic)
	}
	if c.got >= c.want {
		return fmt.Errorf("record %d: more than the %d records sent (key %q)", c.got, c.want, key)
	}
	if !bytes.Equal(key, c.p.keyBytes[c.got]) {
		return fmt.Errorf("record %d: key %q, want %q", c.got, key, c.p.keyBytes[c.got])
	}
	if !bytes.Equal(value, c.p.valueB) {
		return fmt.Errorf("record %d: value of %d bytes is not the value sent", c.got, len(value))
	}
	c.got++
	if c.got == c.want {
		c.last = time.Now()
	}
	return nil
}

// text is record for clients that give keys and values as strings.
func (c *checker) text(topic string, partition int32, key, value string) error {
	if topic == c.topic && partition == 0 && c.got < c.want-1 && key == c.p.keys[c.got] && value == c.p.value {
		c.got++
		return nil
	}
	return c.record(topic, partition, []byte(key), []byte(value))
}

func (c *checker) done() error {
	if c.got != c.want {
		return fmt.Errorf("%s: read %d records, want %d", c.topic, c.got, c.want)
	}
	return nil
}
