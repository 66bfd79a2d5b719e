package value

import "testing"

// fmtReading is a typical JSON-ish reading: a named list with a nested list.
func fmtReading() *List {
	inner := NewList("low-water", "door-open")
	l := &List{}
	l.AppendNamed("device", "boiler-1")
	l.AppendNamed("temperature", 71.5)
	l.AppendNamed("at", int64(1700000000000))
	l.AppendNamed("alarms", inner)
	return l
}

func BenchmarkFormatFlat(b *testing.B) {
	l := NewList("a", int64(1), 2.5, "bbbbbbbbbbbbbbbb")
	b.ReportAllocs()
	for b.Loop() {
		_ = Format(l)
	}
}

func BenchmarkFormatNested(b *testing.B) {
	l := fmtReading()
	b.ReportAllocs()
	for b.Loop() {
		_ = Format(l)
	}
}

func BenchmarkFormatDeep(b *testing.B) {
	l := NewList()
	for i := 0; i < 50; i++ {
		l.Append(fmtReading())
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Format(l)
	}
}
