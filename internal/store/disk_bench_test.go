package store

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkDiskBatch is a per-key count's batches of 500 inputs, in
// memory and on disk; ns/op is per input. "new": each input a new key,
// as a stream's first run over many keys has them (the disk's key
// filter answers their reads). "known": inputs of 100,000 keys counted
// before, in a random order (each read is pebble's); "ahead": the same,
// each batch's keys read ahead (Prefetch), as a stream does. "ahead"
// costs more than "known" here, where no transform runs between the
// reads for the reads ahead to overlap with: the two goroutines race
// for the same keys (bench/clients/diskstate -passes 3 measures the gain).
func BenchmarkDiskBatch(b *testing.B) {
	defer func(n int64) { filterMinKeys = n }(filterMinKeys)
	filterMinKeys = defaultFilterMinKeys // as a stream has it, not as TestMain
	const known = 100_000
	for _, keys := range []string{"new", "known", "ahead"} {
		for _, onDisk := range []bool{false, true} {
			b.Run(keys+"/"+map[bool]string{false: "memory", true: "disk"}[onDisk], func(b *testing.B) {
				cfg := Config{}
				if onDisk {
					d, err := OpenDisk(b.TempDir(), testID, func(string) {})
					if err != nil {
						b.Fatal(err)
					}
					defer d.Close()
					cfg.Disk = d
				}
				st := New(cfg)
				p := st.NewPart(0)
				st.Adopt(p, time.Now())
				count := func(i int, key string) {
					n, err := st.State(p, key)
					if err != nil {
						b.Fatal(err)
					}
					c, _ := n.(int64)
					if err := st.SetState(p, key, c+1); err != nil {
						b.Fatal(err)
					}
					if i%500 == 499 {
						st.Changelog(func(int32, []byte, []byte) {})
						st.SetPosition(p, int64(i))
						if err := st.Commit(); err != nil {
							b.Fatal(err)
						}
					}
				}
				key := func(i int) string { return "k" + strconv.Itoa(i) }
				if keys != "new" {
					for i := range known {
						count(i, key(i))
					}
					key = func(i int) string { return "k" + strconv.Itoa(int(uint64(i)*2654435761%known)) }
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if keys == "ahead" && i%500 == 0 {
						st.Prefetch(func(yield func(int32, []byte) bool) {
							for j := i; j < i+500 && yield(0, []byte(key(j))); j++ {
							}
						})
					}
					count(i, key(i))
				}
			})
		}
	}
}
