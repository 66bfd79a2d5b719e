package kafkabpl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/brain4it/kafkabpl/internal/words"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The readers of config values: each checks one value's type and range
// and words its error with the key and the value.

// valueReader reads one config value, and words its errors with the key
// as the user spelled it and the value (never a secret one).
type valueReader struct {
	key    string
	v      any
	secret bool
}

func (r valueReader) errorf(want string) error {
	got := value.Describe(r.v)
	if r.secret {
		got = "a " + typeName(r.v)
	}
	return Errorf(ErrInvalidConfig, "config %q: want %s, got %s", r.key, want, got)
}

func (r valueReader) string() (string, error) {
	s, ok := r.v.(string)
	if !ok {
		return "", r.errorf("a string")
	}
	return s, nil
}

func (r valueReader) nonEmptyString() (string, error) {
	s, ok := r.v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", r.errorf("a non-empty string")
	}
	return s, nil
}

// choice is one accepted value of an enumerated key: its spellings (the
// first is the one error messages show) and what it parses to.
type choice[T any] struct {
	names []string
	v     T
}

// oneOf reads a string (or a number, as Java properties may hold "1") that
// must be one of the choices' spellings, case-insensitively, and returns
// what it parses to.
func oneOf[T any](r valueReader, choices ...choice[T]) (T, error) {
	s, ok := r.v.(string)
	if n, isInt := r.v.(int64); isInt {
		s, ok = strconv.FormatInt(n, 10), true
	}
	names := make([]string, 0, len(choices))
	for _, c := range choices {
		if ok && slices.Contains(c.names, strings.ToLower(s)) {
			return c.v, nil
		}
		names = append(names, strconv.Quote(c.names[0]))
	}
	slices.Sort(names)
	var zero T
	return zero, r.errorf("one of " + strings.Join(names, ", "))
}

// bool reads true or false, or their strings as Java properties hold them.
func (r valueReader) bool() (bool, error) {
	switch v := r.v.(type) {
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, r.errorf("true or false")
}

// int reads an integer in [lo, hi]: a number, or a decimal string as Java
// properties hold one.
func (r valueReader) int(lo, hi int64) (int64, error) {
	var n int64
	switch v := r.v.(type) {
	case int64:
		n = v
	case float64:
		var ok bool
		if n, ok = words.Integral(v); !ok {
			return 0, r.errorf(fmt.Sprintf("an integer from %d to %d", lo, hi))
		}
	case string:
		var err error
		if n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			return 0, r.errorf(fmt.Sprintf("an integer from %d to %d", lo, hi))
		}
	default:
		return 0, r.errorf(fmt.Sprintf("an integer from %d to %d", lo, hi))
	}
	if n < lo || n > hi {
		return 0, r.errorf(fmt.Sprintf("an integer from %d to %d", lo, hi))
	}
	return n, nil
}

// millis reads a number of milliseconds, at least lo, at most a day.
func (r valueReader) millis(lo int64) (time.Duration, error) {
	n, err := r.int(lo, 24*60*60*1000)
	return time.Duration(n) * time.Millisecond, err
}

// strings reads a string, a comma-joined string, or a list of strings.
func (r valueReader) strings(what string) ([]string, error) {
	var parts []string
	switch v := r.v.(type) {
	case string:
		parts = strings.Split(v, ",")
	case *value.List:
		for _, e := range v.Values() {
			s, ok := e.(string)
			if !ok {
				return nil, r.errorf(what)
			}
			parts = append(parts, strings.Split(s, ",")...)
		}
	default:
		return nil, r.errorf(what)
	}
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, r.errorf(what)
	}
	return out, nil
}

// servers reads "host:port" strings; a server without a port gets 9092.
// Nothing is dialed here.
func (r valueReader) servers() ([]string, error) {
	const want = `"host:port", several joined by commas, or a list of them`
	ss, err := r.strings(want)
	if err != nil {
		return nil, err
	}
	for i, s := range ss {
		host, port, err := net.SplitHostPort(s)
		if err != nil && strings.Contains(err.Error(), "missing port") {
			host, port, err = s, "9092", nil
			ss[i] = net.JoinHostPort(s, port)
		}
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return nil, Errorf(ErrInvalidConfig, "config %q: server %q is not host:port with a port from 1 to 65535", r.key, s)
		}
	}
	return ss, nil
}

func (r valueReader) topics() ([]string, error) {
	ts, err := r.strings("a topic name, several joined by commas, or a list of them")
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if err := topicname.Check(t); err != nil {
			return nil, Errorf(ErrInvalidConfig, "config %q: %v", r.key, err)
		}
	}
	return ts, nil
}

// balancers reads assignment strategies by kgo's names or Java's class
// names (org.apache.kafka.clients.consumer.RangeAssignor and the like).
func (r valueReader) balancers() ([]kgo.GroupBalancer, error) {
	const want = `"range", "roundrobin", "sticky" or "cooperative-sticky", or a list of them`
	names, err := r.strings(want)
	if err != nil {
		return nil, err
	}
	out := make([]kgo.GroupBalancer, 0, len(names))
	cooperative := 0
	for _, n := range names {
		n = strings.ToLower(n[strings.LastIndex(n, ".")+1:])
		switch strings.TrimSuffix(n, "assignor") {
		case "range":
			out = append(out, kgo.RangeBalancer())
		case "roundrobin", "round-robin":
			out = append(out, kgo.RoundRobinBalancer())
		case "sticky":
			out = append(out, kgo.StickyBalancer())
		case "cooperative-sticky", "cooperativesticky":
			out = append(out, kgo.CooperativeStickyBalancer())
			cooperative++
		default:
			return nil, r.errorf(want)
		}
	}
	if cooperative > 0 && cooperative < len(out) {
		return nil, Errorf(ErrInvalidConfig, "config %q: cooperative-sticky cannot be mixed with eager strategies in one consumer", r.key)
	}
	return out, nil
}

func (r valueReader) serde() (*serde.Serde, error) {
	s, ok := r.v.(string)
	if ok {
		if sd := serde.Lookup(s); sd != nil {
			return sd, nil
		}
	}
	return nil, r.errorf("one of String, ByteArray, Short, Integer, Long, Float, Double, JSON, BPL, Avro, Protobuf, JSON-Schema (or a Java class name such as org.apache.kafka.common.serialization.StringSerializer or io.confluent.kafka.serializers.KafkaAvroSerializer)")
}

// subjectStrategy reads "topic", "record" or "topic-record", or the Java
// class names (io.confluent.kafka.serializers.subject.TopicNameStrategy
// and the others).
func (r valueReader) subjectStrategy() (serde.SubjectStrategy, error) {
	s, ok := r.v.(string)
	if ok {
		n := strings.ToLower(strings.TrimSpace(s))
		n = strings.TrimSuffix(n[strings.LastIndex(n, ".")+1:], "namestrategy")
		switch strings.ReplaceAll(n, "-", "") {
		case "topic":
			return serde.TopicStrategy, nil
		case "record":
			return serde.RecordStrategy, nil
		case "topicrecord":
			return serde.TopicRecordStrategy, nil
		}
	}
	return 0, r.errorf(`"topic", "record" or "topic-record" (or Confluent's class names, such as io.confluent.kafka.serializers.subject.TopicNameStrategy)`)
}

// schemaText reads a schema: its text, or (for Avro and JSON Schema) the
// schema as a BPL list, which is written as JSON.
func (r valueReader) schemaText() (string, error) {
	switch v := r.v.(type) {
	case string:
		if strings.TrimSpace(v) != "" {
			return v, nil
		}
	case *value.List:
		if b, err := serde.JSON.Encode(context.Background(), "", v, 0, ""); err == nil {
			return string(b), nil
		}
	}
	return "", r.errorf("a schema: its text, or a list (written as JSON)")
}

// tls reads true/false, or a named list of "ca-file" "cert-file"
// "key-file" "server-name" "insecure-skip-verify". The files are read now,
// so a missing one fails kafka-create rather than the first send.
func (r valueReader) tls() (*tls.Config, error) {
	const want = `true, false, or ("ca-file" => f "cert-file" => f "key-file" => f "server-name" => s "insecure-skip-verify" => b)`
	switch v := r.v.(type) {
	case bool:
		if !v {
			return nil, nil
		}
		return &tls.Config{MinVersion: tls.VersionTLS12}, nil
	case *value.List:
		if v.Len() > 0 && !v.Named() {
			return nil, r.errorf(want)
		}
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		var certFile, keyFile string
		for name, val := range v.All() {
			sub := valueReader{key: r.key + " " + name, v: val}
			var err error
			switch name {
			case "ca-file":
				var f string
				if f, err = sub.nonEmptyString(); err == nil {
					tc.RootCAs, err = loadCA(sub.key, f)
				}
			case "cert-file":
				certFile, err = sub.nonEmptyString()
			case "key-file":
				keyFile, err = sub.nonEmptyString()
			case "server-name":
				tc.ServerName, err = sub.nonEmptyString()
			case "insecure-skip-verify":
				tc.InsecureSkipVerify, err = sub.bool()
			default:
				err = Errorf(ErrInvalidConfig, "config %q: unknown key %q; want %s", r.key, name, want)
			}
			if err != nil {
				return nil, err
			}
		}
		if (certFile == "") != (keyFile == "") {
			return nil, Errorf(ErrInvalidConfig, `config %q: "cert-file" and "key-file" go together`, r.key)
		}
		if certFile != "" {
			cert, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				return nil, Wrapf(ErrInvalidConfig, err, "config %q: cannot load the client certificate", r.key)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		return tc, nil
	}
	return nil, r.errorf(want)
}

func loadCA(key, file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, Wrapf(ErrInvalidConfig, err, "config %q", key)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, Errorf(ErrInvalidConfig, "config %q: %s holds no PEM certificate", key, file)
	}
	return pool, nil
}

// sasl reads ("mechanism" => m "username" => u "password" => p). The
// password never appears in an error.
func (r valueReader) sasl() (sasl.Mechanism, error) {
	const want = `("mechanism" => "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512" "username" => u "password" => p)`
	l, ok := r.v.(*value.List)
	if !ok || !l.Named() {
		return nil, r.errorf(want)
	}
	var mech, user, pass string
	for name, val := range l.All() {
		sub := valueReader{key: r.key + " " + name, v: val, secret: name == "password"}
		var err error
		switch name {
		case "mechanism":
			mech, err = oneOf(sub,
				choice[string]{[]string{"plain"}, "PLAIN"},
				choice[string]{[]string{"scram-sha-256"}, "SCRAM-SHA-256"},
				choice[string]{[]string{"scram-sha-512"}, "SCRAM-SHA-512"})
		case "username":
			user, err = sub.nonEmptyString()
		case "password":
			pass, err = sub.string()
		default:
			err = Errorf(ErrInvalidConfig, "config %q: unknown key %q; want %s", r.key, name, want)
		}
		if err != nil {
			return nil, err
		}
	}
	if mech == "" || user == "" {
		return nil, Errorf(ErrInvalidConfig, `config %q: "mechanism" and "username" are required`, r.key)
	}
	switch mech {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	default:
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
}
