package streamtest

import (
	"context"
	"errors"
	"fmt"
	"io"
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
//	(assert-equal got want [what])        passes when got equals want as BPL's = compares them (3 equals
//	                                      3.0; a list's names are not compared); each assertion is
//	                                      logged "ok what", or "FAIL what" with both values
//
// The script fails the test when it throws, when an assertion fails, or
// when one of its streams failed. What it prints, and its library's log,
// go to the test's log.
func Script(t *testing.T, path string, opts ...Option) {
	t.Helper()
	res := RunScript(t, path, testWriter{t}, opts...)
	if !res.OK() {
		t.Errorf("%s: %d assertions failed, %d passed; errors: %q", path, res.Failed, res.Passed, res.Errors)
	}
}

// ScriptResult is what a test script did.
type ScriptResult struct {
	Passed, Failed int      // its assertions
	Errors         []string // what else failed: the exception it threw, a stream that failed, a file that does not read
}

// OK reports whether the script passed: no assertion failed and nothing
// else did.
func (r ScriptResult) OK() bool { return r.Failed == 0 && len(r.Errors) == 0 }

// RunScript runs the BPL test file at path as [Script] does, but fails
// nothing of t's (t only holds the virtual-time bubble; the cluster's and
// the library's own errors are the script's too): it writes a line
// per assertion to out, "ok what", or "FAIL what" followed by the two
// values on lines of their own, and each error as "error: ...", and
// returns what the script did. What the script prints, and its library's
// log, go to out too. kafkabpl test runs test scripts with it.
func RunScript(t *testing.T, path string, out io.Writer, opts ...Option) ScriptResult {
	t.Helper()
	var res ScriptResult
	src, err := os.ReadFile(path)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		fmt.Fprintf(out, "error: %v\n", err)
		return res
	}
	if !virtualClock {
		res.Errors = append(res.Errors, errNoTag)
		fmt.Fprintf(out, "error: %s\n", errNoTag)
		return res
	}
	failure := func(msg string) {
		res.Errors = append(res.Errors, msg)
		fmt.Fprintf(out, "error: %s\n", msg)
	}
	bubble(t, func(_ *testing.T, err error) { failure("streamtest: " + err.Error()) }, func(d *Driver) {
		in := bpl.New(out)
		in.SetErrorOutput(out)
		d.Lib.SetLogOutput(out)
		if o := newOptions(opts); o.log != nil {
			d.Lib.SetLogOutput(o.log)
		}
		for name, f := range functions.Table(d.Lib) {
			in.Define(name, f)
		}
		in.SetGlobal("kafka-servers", d.Servers)
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
			recs, err := d.read(topic, config)
			if err != nil {
				return nil, fmt.Errorf("read-topic: %w", err)
			}
			list := &value.List{}
			for i := range recs {
				list.AppendNamed(fmt.Sprint(recs[i].Key()), recs[i].Value())
			}
			return list, nil
		})
		in.Define("assert-equal", func(_ context.Context, l *value.List) (any, error) {
			if l.Len() < 2 || l.Len() > 3 {
				return nil, fmt.Errorf("assert-equal: want (assert-equal got want [what]); got %s", value.Format(l))
			}
			what := fmt.Sprint(arg(l, 2))
			if l.Len() == 2 {
				what = value.Format(arg(l, 1))
			}
			if bpl.Equal(arg(l, 0), arg(l, 1)) {
				res.Passed++
				fmt.Fprintf(out, "ok   %s\n", what)
				return true, nil
			}
			res.Failed++
			fmt.Fprintf(out, "FAIL %s\n      got %s\n     want %s\n", what, value.Format(arg(l, 0)), value.Format(arg(l, 1)))
			return false, nil
		})
		err := in.Run(context.Background(), path, string(src), nil)
		in.Close()
		var ex *bpl.Exception
		switch {
		case errors.As(err, &ex):
			failure(ex.Error())
		case err != nil:
			failure(err.Error())
		}
		for _, err := range stream.Of(d.Lib).Failed() {
			failure(err.Error())
		}
	}, opts)
	return res
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
