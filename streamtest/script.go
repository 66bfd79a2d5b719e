package streamtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/functions"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// Script runs the BPL test file at path in virtual time, on a fresh
// cluster (see [Run]): the script's streams and clients are the kafka-
// functions' ones, and kafka-servers names the cluster. Besides
// brain4it's core library and the kafka- functions, a test script has
//
//	(advance ms)                          the virtual clock moves on; what the streams do meanwhile is done
//	(read-topic topic [config-key value ...])
//	                                      what a read_committed consumer has read of topic since the script began,
//	                                      as (key => value ...); config keys as kafka-create takes them
//	                                      ("value-deserializer" => "JSON", ...), read at the first call
//	(assert-equal got want [what])        passes when got equals want (as BPL's = compares); each
//	                                      assertion is logged "ok what", or fails the test with both values
//
// The script fails the test when it throws, when an assertion fails, or
// when one of its streams failed.
func Script(t *testing.T, path string, opts ...Option) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("streamtest: %v", err)
	}
	Run(t, func(d *Driver) {
		in := bpl.New(testWriter{t})
		in.SetErrorOutput(testWriter{t})
		d.Lib.SetLogOutput(testWriter{t})
		for name, f := range functions.Table(d.Lib) {
			in.Define(name, f)
		}
		in.SetGlobal("kafka-servers", d.Servers)
		passed, failed := 0, 0
		in.Define("advance", func(_ context.Context, l *value.List) (any, error) {
			ms, ok := arg(l, 0).(int64)
			if l.Len() != 1 || !ok || ms < 0 {
				return nil, fmt.Errorf("advance: want (advance ms), ms an integer of 0 or more; got %s", value.Format(l))
			}
			d.Advance(time.Duration(ms) * time.Millisecond)
			return nil, nil
		})
		in.Define("read-topic", func(_ context.Context, l *value.List) (any, error) {
			topic, ok := arg(l, 0).(string)
			if l.Len() == 0 || !ok {
				return nil, fmt.Errorf("read-topic: want (read-topic topic [config-key value ...]); got %s", value.Format(l))
			}
			config := map[string]any{}
			for i := 1; i < l.Len(); i++ {
				if name := l.Name(i); name != "" {
					config[name] = arg(l, i)
				}
			}
			recs := d.ReadWith(topic, config)
			out := &value.List{}
			for i := range recs {
				out.AppendNamed(fmt.Sprint(recs[i].Key()), recs[i].Value())
			}
			return out, nil
		})
		in.Define("assert-equal", func(_ context.Context, l *value.List) (any, error) {
			if l.Len() < 2 || l.Len() > 3 {
				return nil, fmt.Errorf("assert-equal: want (assert-equal got want [what]); got %s", value.Format(l))
			}
			what := fmt.Sprint(arg(l, 2))
			if l.Len() == 2 {
				what = value.Format(arg(l, 1))
			}
			if value.NewList(arg(l, 0)).Equal(value.NewList(arg(l, 1))) {
				passed++
				t.Logf("ok %s", what)
				return true, nil
			}
			failed++
			t.Errorf("FAIL %s:\n got %s\nwant %s", what, value.Format(arg(l, 0)), value.Format(arg(l, 1)))
			return false, nil
		})
		err := in.Run(context.Background(), path, string(src), nil)
		in.Close()
		var ex *bpl.Exception
		switch {
		case errors.As(err, &ex):
			t.Errorf("%s: %s", path, ex.Error())
		case err != nil:
			t.Errorf("%s: %v", path, err)
		}
		for _, err := range stream.Of(d.Lib).Failed() {
			t.Errorf("%s: %v", path, err)
		}
		t.Logf("%s: %d assertions passed, %d failed", path, passed, failed)
	}, opts...)
}

// arg is argument i of l, nil when there are fewer.
func arg(l *value.List, i int) any {
	if i < l.Len() {
		return l.At(i)
	}
	return nil
}

// testWriter writes to the test's log, a line at a time.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
