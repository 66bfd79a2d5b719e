package bpl

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

func TestScopeOrderAndPaths(t *testing.T) {
	ctx := context.Background()
	in := New(nil)
	if err := in.Run(ctx, "t", `(set b 1) (set a (list 1 "x" => (list 2 3))) (set c "z")`, nil); err != nil {
		t.Fatal(err)
	}
	if got := value.Format(in.Scope()); got != `("b" => 1 "a" => (1 "x" => (2 3)) "c" => "z")` {
		t.Fatalf("scope %s", got)
	}
	if v, err := in.GetPath(ctx, []any{"a", "x", 1}); err != nil || v != int64(3) {
		t.Fatalf("get a/x/1 = %v, %v", v, err)
	}
	if old, err := in.PutPath(ctx, []any{"a", "x", 0}, int64(9)); err != nil || old != int64(2) {
		t.Fatalf("put a/x/0 old = %v, %v", old, err)
	}
	if _, err := in.PutPath(ctx, []any{"c", 0}, int64(9)); !errors.Is(err, ErrPath) {
		t.Fatalf("put into a string: %v", err)
	}
	if old, err := in.DeletePath(ctx, []any{"b"}); err != nil || old != int64(1) {
		t.Fatalf("delete b = %v, %v", old, err)
	}
	s, err := in.FormatScope(ctx)
	if err != nil || s != `("a" => (1 "x" => (9 3)) "c" => "z")` {
		t.Fatalf("FormatScope = %s, %v", s, err)
	}
}

func TestReplaceScopeSelfReference(t *testing.T) {
	vs, err := value.Parse(`(<#1> "me" => <@1> "n" => 5)`)
	if err != nil {
		t.Fatal(err)
	}
	in := New(nil)
	in.ReplaceScope(vs[0].(*value.List))
	v, err := in.Eval(context.Background(), value.Reference("n"))
	if err != nil || v != int64(5) {
		t.Fatalf("n = %v, %v", v, err)
	}
	s, err := in.FormatScope(context.Background())
	if err != nil || s != `(<#1> "me" => <@1> "n" => 5)` {
		t.Fatalf("FormatScope = %s, %v", s, err)
	}
}

// FormatScope and GetPath hold a list's monitor, so they do not race with
// code that changes the list inside sync (run with -race).
func TestFormatScopeWhileSyncedCodeChangesIt(t *testing.T) {
	ctx := context.Background()
	in := New(nil)
	if err := in.Run(ctx, "t", `(set l (list))`, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 200 {
			if err := in.Run(ctx, "t", `(sync l (push l 1))`, nil); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 200 {
			if _, err := in.FormatScope(ctx); err != nil {
				t.Error(err)
				return
			}
			if _, err := in.GetPath(ctx, []any{"l", 0}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	if v, _ := in.Global("l"); v.(*value.List).Len() != 200 {
		t.Fatalf("l has %d elements", v.(*value.List).Len())
	}
}

func TestSafeEvalRecoversPanics(t *testing.T) {
	in := New(nil)
	in.Define("boom", func(context.Context, *value.List) (any, error) { panic("boom") })
	_, err := in.SafeEval(context.Background(), value.NewList(value.Reference("boom")))
	var ex *Exception
	if !errors.As(err, &ex) || ex.Type != "InternalError" {
		t.Fatalf("err = %v", err)
	}
}

// FormatScope does not deadlock with code that holds one list's monitor
// while it waits for another's.
func TestFormatScopeBacksOff(t *testing.T) {
	ctx := context.Background()
	in := New(nil)
	if err := in.Run(ctx, "t", `(set a (list 1)) (set b (list 2))`, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- in.Run(ctx, "t", `(sync b (sleep 100) (sync a (push a 3)))`, nil)
	}()
	for range 50 {
		if _, err := in.FormatScope(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s, err := in.FormatScope(ctx)
	if err != nil || s != `("a" => (1 3) "b" => (2))` {
		t.Fatalf("FormatScope = %s, %v", s, err)
	}
}
