package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/brain4it/kafkabpl/server"
)

// A server embedded in a Go program: create a module, post code into it and
// call its exterior function, as brain4it's manager and dashboards do.
func Example() {
	srv := server.New(server.Config{}) // in memory; Store: server.DirStore{Dir: ...} keeps modules
	if err := srv.Start(context.Background()); err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())
	hs := httptest.NewServer(srv) // or http.ListenAndServe("127.0.0.1:9999", srv)
	defer hs.Close()

	do := func(method, path, body string) {
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain; charset=UTF-8")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, string(b))
	}
	do("PUT", "/sensors", "")
	do("POST", "/sensors", `(set temp 21.5) (set @temp (function (ctx) temp))`)
	do("POST", "/sensors/@temp", "")
	do("GET", "/sensors/temp", "")
	do("POST", "/sensors", "(+ 1")
	// Output:
	// 200 "Module sensors created."
	// 200 (function (ctx) temp)
	// 200 21.5
	// 200 21.5
	// 500 ("ParseException" "message" => "line 1, column 1: list not closed: missing )")
}

// A module of a server, driven from Go rather than HTTP.
func ExampleServer_CreateModule() {
	ctx := context.Background()
	srv := server.New(server.Config{})
	defer srv.Shutdown(ctx)
	m, err := srv.CreateModule(ctx, "calc", nil)
	if err != nil {
		panic(err)
	}
	// start holds code, which Start evaluates, as brain4it's server does
	v, err := m.EvalText(ctx, `(set start (quote (set ready true))) (module-name)`)
	fmt.Println(v, err)
	fmt.Println(m.Start(ctx))
	ready, _ := m.Interp().Global("ready")
	fmt.Println(ready)
	// Output:
	// calc <nil>
	// <nil>
	// true
}
