package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// benchPost posts body to path b.N times from GOMAXPROCS clients.
func benchPost(b *testing.B, c *client, path, body string) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "text/plain; charset=UTF-8")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("HTTP %d", resp.StatusCode)
			}
		}
	})
}

// POST /module evaluations over HTTP (keep-alive), as the bench tool makes
// them.
func BenchmarkPostEval(b *testing.B) {
	_, c := newTestServer(b, Config{})
	c.ok("PUT", "/m", "")
	benchPost(b, c, "/m", "(+ 1 2)")
}

// POST /module/@fn exterior calls.
func BenchmarkExteriorCall(b *testing.B) {
	_, c := newTestServer(b, Config{})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", "(set n 0) (set @inc (function (ctx x) (+ x 1)))")
	benchPost(b, c, "/m/@inc", "41")
}

// One change fanned out to 100 monitor streams: each op is a module-notify
// after a change, and the wait until all 100 watchers read its line.
func BenchmarkMonitorFanout100(b *testing.B) {
	_, c := newTestServer(b, Config{})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", "(set v 0) (set @v (function (ctx) v))")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const watchers = 100
	mons := make([]*monitor, watchers)
	for i := range mons {
		mons[i] = c.watch(ctx, "m", 0, "@v")
		mons[i].next(b, 0x7fffffff)
	}
	b.ResetTimer()
	for i := range b.N {
		c.ok("POST", "/m", fmt.Sprintf(`(set v %d) (module-notify "@v")`, i+1))
		var wg sync.WaitGroup
		for _, m := range mons {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					line, ok := <-m.lines
					if !ok || strings.HasPrefix(line, fmt.Sprintf(`("@v" %d `, i+1)) {
						return
					}
				}
			}()
		}
		wg.Wait()
	}
}
