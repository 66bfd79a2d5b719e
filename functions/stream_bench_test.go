package functions

import (
	"io"
	"testing"

	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
)

// BenchmarkBPLTransform is a kafka-stream's work per input with a BPL
// function, the broker left out: the input's record list, the call
// through the evaluator, and the outputs read from what it returned. Its
// allocations per op are the BPL stream path's own per input.
func BenchmarkBPLTransform(b *testing.B) {
	in := inputRecord(b)
	ip := bpl.New(io.Discard)
	defer ip.Close()
	src, err := value.Parse(`(function (in) (get in "value"))`)
	if err != nil {
		b.Fatal(err)
	}
	fv, err := ip.Eval(testkit.Ctx(b), src[0])
	if err != nil {
		b.Fatal(err)
	}
	tr := bplTransform(fv.(value.Callable))
	ctx := testkit.Ctx(b)
	b.ReportAllocs()
	for b.Loop() {
		outs, err := tr(ctx, in)
		if err != nil || len(outs) != 1 || outs[0].Value != "v" {
			b.Fatal(outs, err)
		}
	}
}
