package browsertest

import (
	"context"
	"os"
	"testing"
)

// TestServerURL runs the page against the brain4it-protocol server at
// $KAFKABPL_BRAIN4IT_URL (brain4it's own Java server, for one), and is
// skipped when that is unset.
func TestServerURL(t *testing.T) {
	u := os.Getenv("KAFKABPL_BRAIN4IT_URL")
	if u == "" {
		t.Skip("KAFKABPL_BRAIN4IT_URL is not set: no server to point the browser at")
	}
	Require(t)
	if err := Run(context.Background(), t, u); err != nil {
		t.Fatal(err)
	}
}
