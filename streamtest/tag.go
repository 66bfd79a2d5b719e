//go:build !synctests

package streamtest

// virtualClock tells whether franz-go was built for synctest (the
// "synctests" build tag): without it, a client can block on a mutex held by
// a goroutine that waits for the virtual clock, which then never moves.
const virtualClock = false
