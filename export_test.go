package kafkabpl

// What the package's external tests (package kafkabpl_test) share with its
// own: the workload of the benchmarks (bench_test.go and
// bench_compare_test.go).
const (
	BenchBatch     = benchBatch
	BenchValueSize = benchValueSize
)

var (
	BenchValue = benchValue
	BenchKeys  = benchKeys
)
