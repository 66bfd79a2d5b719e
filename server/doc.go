// Package server is a brain4it server in Go: modules, each a BPL global
// scope with its own interpreter (package bpl) and its own kafkabpl
// Library, and an http.Handler that speaks brain4it's HTTP protocol, so that
// brain4it's manager (desktop, Android, web) and its dashboards work with
// it. Any Go program can embed a BPL runtime with Kafka and serve it:
//
//	srv := server.New(server.Config{Store: server.DirStore{Dir: "modules"}, Servers: "127.0.0.1:9092"})
//	srv.Start(ctx)              // load the saved modules, run their start
//	http.ListenAndServe("127.0.0.1:9999", srv)
//	srv.Shutdown(ctx)           // stop and save them
//
// The protocol is brain4it's (its HttpDispatcher, RestService,
// MonitorService and PathParser): see [Server.ServeHTTP] for the requests
// and monitor.go for the monitor streams. Bodies are BPL text; answers are
// BPL text printed with brain4it's tags, so a scope that refers to itself
// prints and reads back.
//
// A module lives as brain4it's does. Its variables start, stop,
// module-metadata, access-key and setup mean what they mean there: the
// code start holds is evaluated when the server starts (Server.Start) or
// module-start is called, stop's at shutdown, module-stop and destroy,
// after which the module's executors are killed and its Kafka handles
// destroyed (a function there evaluates to itself and is not called, as
// on brain4it). The server's errors have brain4it's exception types and
// messages (see ExceptionList). Snapshots of its
// scope are kept in a Store (DirStore keeps brain4it's layout,
// DIR/MODULE/NAME.snp); head is saved on Shutdown and loaded at Start.
// The module functions of brain4it's ModuleLibrary are defined in every
// module (see library.go), next to the kafka-* functions; kafka-servers
// is set when Config.Servers is.
//
// Concurrency is brain4it's: requests, monitor evaluations and executors
// run at the same time on one module. The interpreter's globals are
// protected; lists are not, except that the server reads and prints a list
// while holding its monitor, so code that changes shared lists inside
// (sync list ...) never races with GET, PUT or a monitor. Every evaluation
// is capped (Config.MaxEvalTime, 300 s by default; 60 s for start and
// stop; 10 s for a monitor's) and cancelled with its request, and a Go
// panic in one is recovered: a runaway or failing evaluation never takes
// down the server or another module.
//
// Security is brain4it's, closed where brain4it's is open: with
// Config.AccessKey set, a request with that key (header access-key) may do
// anything; a module whose access-key variable is set needs that key or
// the server's; a module without one needs the server's (brain4it leaves
// it open to all). Exterior functions (@name) and monitors are open to all,
// as there, since dashboards call them without a key: expose only what a
// stranger may call as an exterior function. GET / and GET
// /module/module-metadata need no key. A module created with PUT and a key
// keeps that key as its access-key. Without Config.AccessKey every request
// is allowed: serve such a server on loopback only.
//
// Several servers may run one module whose stateful stream shares a
// group, each holding part of the store's partitions. With Config.URL
// set, each module's streams advertise URL/MODULE as their query
// endpoint, and kafka-store-get or kafka-store-windows of a key another
// server holds is forwarded there (POST /MODULE with the header
// kafka-store-query, which needs the module's or the server's key, and
// carries the module's access-key, else the server's): see
// store_query.go. module-notify is told to the same module on those
// servers too (POST /MODULE with the header kafka-module-notify, the
// names as a BPL list, and the same key), so that a dashboard on any of
// them updates when any of them commits what it draws: see
// peer_notify.go.
package server
