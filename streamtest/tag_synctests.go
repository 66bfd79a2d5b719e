//go:build synctests

package streamtest

// virtualClock: franz-go's locks are channels, which synctest sees as
// durably blocked (see tag.go).
const virtualClock = true
