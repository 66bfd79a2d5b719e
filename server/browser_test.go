package server

import (
	"context"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/internal/browsertest"
)

// TestBrowser is brain4it's web client's way in, in a real browser:
// headless chromium loads a page from another origin, which creates a
// module, posts code, calls an exterior function and follows a monitor
// stream with fetch, so that CORS (the preflight the monitor header
// causes, server-time exposed) and chunked streaming are proven where
// only a browser checks them. It fails without chromium when CI is set.
func TestBrowser(t *testing.T) {
	browsertest.Require(t)
	_, c := newTestServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := browsertest.Run(ctx, t, c.base); err != nil {
		t.Fatal(err)
	}
}
