// Package testdial is how the module's tests decide what package
// kafkabpl's clients may dial. Every connection the root package makes,
// to the brokers and to a schema registry, goes through [Dial] when it is
// set.
//
// Only tests set it, through package internal/testkit, whose import
// installs a dialer that reaches loopback addresses only, so that no
// config a test or a fuzzer makes up reaches another host. It is a hook
// that the root reads rather than an option of a Library: every Library
// a test binary makes is guarded, by whichever package's test it is made
// and however (New, a helper, an example), not only those a test
// remembers to set up. Being internal, no program outside the module can
// set it. A Library given a dialer of its own (Library.SetDialer, as
// package streamtest gives its in-memory network's) dials with that one.
package testdial

import (
	"context"
	"net"
)

// Dial, when set, makes every connection of package kafkabpl's clients.
// It is set before any client exists (in an init function) and never
// changed after.
var Dial func(ctx context.Context, network, addr string) (net.Conn, error)
