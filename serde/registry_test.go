package serde

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

const userV1 = `{"type":"record","name":"User","namespace":"app","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"}]}`

// newFake starts franz-go's in-memory registry for the test.
func newFake(t testing.TB) *srfake.Registry {
	t.Helper()
	fake := srfake.New()
	t.Cleanup(fake.Close)
	return fake
}

// newRegistry makes a client of cfg's registry, closed at the test's end.
func newRegistry(t testing.TB, cfg RegistryConfig) *Registry {
	t.Helper()
	reg, err := NewRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	return reg
}

// bind is s bound to reg for role, or the test's end.
func bind(t testing.TB, s *Serde, reg *Registry, role Role) *Serde {
	t.Helper()
	b, err := s.Bind(reg, role)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBindErrors: what a registry config or a binding gets wrong is an
// ErrInvalidConfig error that says which setting, before any I/O.
func TestBindErrors(t *testing.T) {
	t.Parallel()
	if _, err := NewRegistry(RegistryConfig{URL: "localhost:8081"}); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "want an http:// or https:// URL") {
		t.Errorf("a URL without a scheme: %v", err)
	}
	for _, tt := range []struct {
		cfg  RegistryConfig
		s    *Serde
		role Role
		want string
	}{
		{RegistryConfig{ValueSchema: `{"type":"nope"}`}, Avro, ValueDeserializer, `config "value-schema": not a valid Avro schema`},
		{RegistryConfig{KeySchema: `syntax = "proto3"; message {`}, Protobuf, KeySerializer, `config "key-schema": not a valid Protobuf schema`},
		{RegistryConfig{Strategy: RecordStrategy}, Avro, ValueSerializer, `the record strategies need the schema: give "value-schema"`},
		{RegistryConfig{KeyStrategy: TopicRecordStrategy, UseID: 3}, JSONSchema, KeySerializer, `give "key-schema"`},
		{RegistryConfig{}, String, ValueSerializer, `the String serde has no schema`},
	} {
		tt.cfg.URL = "http://127.0.0.1:1"
		if _, err := tt.s.Bind(newRegistry(t, tt.cfg), tt.role); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
	// A record strategy reads: it needs no schema to name the subject.
	if _, err := Avro.Bind(newRegistry(t, RegistryConfig{URL: "http://127.0.0.1:1", Strategy: RecordStrategy}), ValueDeserializer); err != nil {
		t.Errorf("a deserializer with the record strategy: %v", err)
	}
	// An unbound schema serde neither writes nor reads.
	ctx := t.Context()
	if _, err := Avro.Encode(ctx, "t", int64(1), 1, ""); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "needs a schema registry") {
		t.Errorf("Encode of an unbound serde: %v", err)
	}
	if _, err := Avro.Decode(ctx, "t", []byte{0, 0, 0, 0, 1}, "value"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Decode of an unbound serde: %v", err)
	}
}

// TestSubjects: each strategy registers a key's and a value's schema
// under its subject, and the records it writes read back.
func TestSubjects(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	user := value.NewList().AppendNamed("name", "ann").AppendNamed("age", int64(31))
	for _, tt := range []struct {
		strategy    SubjectStrategy
		key, record string
	}{
		{TopicStrategy, "t-key", "t-value"},
		{RecordStrategy, "kafkabpl.Key", "app.User"},
		{TopicRecordStrategy, "t-kafkabpl.Key", "t-app.User"},
	} {
		fake := newFake(t)
		reg := newRegistry(t, RegistryConfig{URL: fake.URL(), AutoRegister: true, Strategy: tt.strategy, KeyStrategy: tt.strategy,
			KeySchema: `{"type":"record","name":"Key","namespace":"kafkabpl","fields":[{"name":"id","type":"long"}]}`, ValueSchema: userV1})
		keySer, valSer := bind(t, Avro, reg, KeySerializer), bind(t, Avro, reg, ValueSerializer)
		k, err := keySer.Encode(ctx, "t", value.NewList().AppendNamed("id", int64(7)), 1, "key")
		if err != nil {
			t.Fatal(err)
		}
		v, err := valSer.Encode(ctx, "t", user, 1, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, subject := range []string{tt.key, tt.record} {
			if _, ok := fake.GetSchema(subject, 1); !ok {
				t.Errorf("strategy %d: no subject %s", tt.strategy, subject)
			}
		}
		if got, err := bind(t, Avro, reg, ValueDeserializer).Decode(ctx, "t", v, "value"); err != nil || !equalValues(got, user) {
			t.Errorf("strategy %d: the value reads back as %s, %v", tt.strategy, value.Format(got), err)
		}
		if got, err := bind(t, Avro, reg, KeyDeserializer).Decode(ctx, "t", k, "key"); err != nil || value.Format(got) != `("id" => 7)` {
			t.Errorf("strategy %d: the key reads back as %s, %v", tt.strategy, value.Format(got), err)
		}
	}
}

// TestRegistryDial: a config's Dial dials that registry's connections, and
// no other's, so tests that give registries dialers of their own run in
// parallel.
func TestRegistryDial(t *testing.T) {
	t.Parallel()
	fake := newFake(t)
	var dials atomic.Int32
	counted := newRegistry(t, RegistryConfig{URL: fake.URL(), AutoRegister: true, ValueSchema: userV1,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}})
	refused := newRegistry(t, RegistryConfig{URL: fake.URL(), AutoRegister: true, ValueSchema: userV1,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return nil, fmt.Errorf("no dialing %s here", addr)
		}})
	user := value.NewList().AppendNamed("name", "ann").AppendNamed("age", int64(31))
	if _, err := bind(t, Avro, counted, ValueSerializer).Encode(t.Context(), "t", user, 1, ""); err != nil || dials.Load() == 0 {
		t.Errorf("Encode through the counting dialer: %v, %d dials", err, dials.Load())
	}
	before := dials.Load()
	_, err := bind(t, Avro, refused, ValueSerializer).Encode(t.Context(), "t", user, 1, "")
	if !errors.Is(err, ErrSchemaRegistry) || !strings.Contains(err.Error(), "no dialing") || !strings.Contains(err.Error(), fake.URL()) {
		t.Errorf("Encode through the refusing dialer: %v", err)
	}
	if dials.Load() != before {
		t.Error("the refusing registry's request went through the other's dialer")
	}
}

// silentRegistry is the URL of a server that accepts connections and
// never answers, as a registry that hangs does; it stops at the test's
// end.
func silentRegistry(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
			close(done)
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // read nothing, answer nothing
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String()
}

// TestRegistryContext: a registry that does not answer holds Encode,
// Decode and Prepare only until the caller's context ends, well before
// the registry's own timeout, and their error is the context's, not an
// ErrSchemaRegistry one. Such a failure is not remembered: the next call,
// with a context that has time, asks again.
func TestRegistryContext(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, RegistryConfig{URL: silentRegistry(t), Timeout: 20 * time.Second, AutoRegister: true, ValueSchema: userV1})
	user := value.NewList().AppendNamed("name", "ann").AppendNamed("age", int64(31))
	ser, deser := bind(t, Avro, reg, ValueSerializer), bind(t, Avro, reg, ValueDeserializer)
	record := []byte{0, 0, 0, 0, 7, 6, 'a', 'n', 'n', 62}
	for _, tt := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Encode", func(ctx context.Context) error { _, err := ser.Encode(ctx, "t", user, 1, ""); return err }},
		{"Decode", func(ctx context.Context) error { _, err := deser.Decode(ctx, "t", record, "value"); return err }},
		{"Prepare", func(ctx context.Context) error { return deser.Prepare(ctx, "t", record) }},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		start := time.Now()
		err := tt.call(ctx)
		cancel()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s took %v, past its context's 200 ms", tt.name, d)
		}
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrSchemaRegistry) || !strings.Contains(fmt.Sprint(err), reg.url) {
			t.Errorf("%s with a silent registry: %v, want the context's deadline, naming the registry", tt.name, err)
		}
	}
	reg.mu.Lock()
	remembered := len(reg.failedID)
	reg.mu.Unlock()
	if remembered != 0 {
		t.Errorf("a lookup the caller's context ended is remembered as the registry's failure (%d)", remembered)
	}
}
