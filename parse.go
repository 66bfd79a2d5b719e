package kafkabpl

import "errors"

// Parse is being written (reader of BPL text); placeholder so the package builds.
func Parse(src string) ([]any, error) { return nil, errors.New("not yet") }
