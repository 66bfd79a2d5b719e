// Package topicname holds Kafka's rules for topic names, shared by the library
// and the embedded cluster, so that a bad name fails with a clear message
// before any broker sees it (kfake accepts any name, which other clients
// then choke on).
package topicname

import "fmt"

// MaxLen is the longest topic name Kafka accepts.
const MaxLen = 249

// Check returns an error describing why name is not a valid Kafka topic
// name, or nil: 1 to 249 letters, digits, '.', '_' and '-', and not "."
// or "..".
func Check(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > MaxLen {
		return fmt.Errorf("invalid topic name %.60q: want 1 to %d characters, not \".\" or \"..\"", name, MaxLen)
	}
	for _, ch := range name {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '-') {
			return fmt.Errorf("invalid topic name %q: only letters, digits, '.', '_' and '-' are allowed", name)
		}
	}
	return nil
}
