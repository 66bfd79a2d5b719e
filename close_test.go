package kafkabpl

import (
	"context"
	"errors"
	"testing"
)

// TestClosedLibrary checks that Close destroys every handle and that later
// calls fail with ErrClosed.
func TestClosedLibrary(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := New()
	ctx := context.Background()
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	if err := lib.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Send(ctx, p, []string{"t"}, []Message{{Value: "x"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("send after Close: %v, want ErrClosed", err)
	}
	if _, err := lib.Create(ctx, Producer, servers); !errors.Is(err, ErrClosed) {
		t.Errorf("create after Close: %v, want ErrClosed", err)
	}
}
