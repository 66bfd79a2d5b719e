package store

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkDiskBatch is a per-key count's batches of 500 inputs, each a
// new key, as a stream's first run over many keys has them: in memory
// and on disk. ns/op is per input.
func BenchmarkDiskBatch(b *testing.B) {
	for _, onDisk := range []bool{false, true} {
		b.Run(map[bool]string{false: "memory", true: "disk"}[onDisk], func(b *testing.B) {
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
			b.ReportAllocs()
			for i := range b.N {
				key := "k" + strconv.Itoa(i)
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
		})
	}
}
