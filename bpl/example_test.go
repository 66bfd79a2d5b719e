package bpl_test

import (
	"context"
	"fmt"
	"os"

	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/value"
)

// An interpreter with one Go function of its own, running a script and
// printing each top-level result.
func Example() {
	in := bpl.New(os.Stdout)
	defer in.Close()
	in.Define("twice", func(ctx context.Context, args *value.List) (any, error) {
		n, ok := args.At(0).(int64)
		if !ok {
			return nil, fmt.Errorf("twice: want an integer, got %s", value.Format(args.At(0)))
		}
		return 2 * n, nil
	})
	src := `(set readings (list 20 21 23))
(apply readings (function (x) (twice x)))
(set sum 0)
(for-each readings r (set sum (+ sum r)))
(print "sum:" sum)`
	err := in.Run(context.Background(), "example", src, func(v any) {
		if v != nil {
			fmt.Println(value.Format(v))
		}
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// (20 21 23)
	// (40 42 46)
	// 0
	// 64
	// sum: 64
}
