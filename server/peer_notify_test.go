package server

import (
	"context"
	"testing"
	"time"
)

// TestPeerNotifyRoute posts module-notify as a peer server forwards it:
// the module's monitors watching the names are told, and the answer is
// how many; a request without the key, to a path, or whose body is no
// list of names is refused, naming what was wrong.
func TestPeerNotifyRoute(t *testing.T) {
	_, c := newPeerServer(t, Config{AccessKey: "k"})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", `(set v 1) (set @v (function (ctx) v))`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mon := c.watch(ctx, "m", 0, "@v")
	if got := mon.next(t, 30*time.Second).text; got != "1" {
		t.Fatalf("the monitor's first value: %s", got)
	}
	c.ok("POST", "/m", `(set v 2)`)
	if got := c.ok("POST", "/m", `("@v" "@other")`, PeerNotifyHeader, "1"); got != "1" {
		t.Errorf("told %s monitors, want 1", got)
	}
	if got := mon.next(t, 30*time.Second).text; got != "2" {
		t.Errorf("the monitor's value once told: %s", got)
	}
	c.withKey("").fails("POST", "/m", `("@v")`, "SecurityException", "not authorized", PeerNotifyHeader, "1")
	c.fails("POST", "/m/@v", `("@v")`, "IOException", "posted to its module, /m", PeerNotifyHeader, "1")
	c.fails("POST", "/m", `"@v"`, "InvalidArgument", `kafka-module-notify: want a list of function names, got "\"@v\""`, PeerNotifyHeader, "1")
	c.fails("POST", "/m", `("@v" 3)`, "InvalidArgument", "want a list of function names", PeerNotifyHeader, "1")
	c.fails("POST", "/no-such-module", `("@v")`, "IOException", "Module no-such-module not found.", PeerNotifyHeader, "1")
}
