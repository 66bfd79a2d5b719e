package value

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
)

// brain4it's tags for lists that appear more than once in a value, or in
// themselves: its printer writes such a list, where it first appears, with
// a declaration tag, (<#1> 1 2 3), and every other place it appears as a
// link, <@1>; its reader gives back the one list for both. The reader
// (parse.go) reads a tag as a reference; resolveTags then turns them into
// the lists they name, and Format writes them (format.go). brain4it's
// structure tags, <#1:2> and <#:2> (lists sharing their names' structure,
// a memory saving), are read as their data tag alone, and never written.
//
// A list read with a declaration tag is marked (List.Tagged): it is shared
// on purpose, and an evaluator gives the list itself where it would copy
// another data list, as brain4it does.

var (
	declTag = regexp.MustCompile(`^<#([0-9A-Za-z_]*)(?::[0-9A-Za-z_]+)?>$`)
	linkTag = regexp.MustCompile(`^<@([0-9A-Za-z_]+)>$`)
)

// mayCycle is whether this process ever read a declaration tag or
// marked a list shared.
var mayCycle atomic.Bool

// MayCycle reports whether some list of this process may contain itself:
// [Parse] has read one of brain4it's declaration tags, or a runtime has
// let a list contain itself ([List.MarkShared]). Until then none does, and
// code that would look for a cycle ([Cyclic]) can skip it.
func MayCycle() bool { return mayCycle.Load() }

// MarkShared marks l as a list read with a declaration tag is marked
// ([List.Tagged]): shared on purpose, and maybe within itself. brain4it
// lets a list be put into itself ((put r "me" r)), and a runtime that
// does the same calls MarkShared on the list put into, before the put:
// every cycle then passes through a tagged list, which is what
// [List.Equal] and an evaluator's copies of data lists look for to end.
// It also makes [MayCycle] true.
func (l *List) MarkShared() {
	mayCycle.Store(true)
	l.tagged = true
}

// resolveTags rewrites values as the reader reads them: a list whose
// first element is a declaration tag loses it and is registered under its
// id; a link tag is replaced by the list registered under its id, which
// must come before it in the text. Tags are resolved within each top-level
// value, as brain4it's reader reads one value at a time. line gives a
// list's line for the error, when known.
func resolveTags(vs []any, line func(*List) int) error {
	for _, v := range vs {
		l, ok := v.(*List)
		if !ok {
			if r, ok := v.(Reference); ok && (declTag.MatchString(string(r)) || linkTag.MatchString(string(r))) {
				return &SyntaxError{Line: 1, Column: 1, Msg: fmt.Sprintf("tag %s outside a list", r)}
			}
			continue
		}
		if err := resolveList(l, map[string]*List{}, map[*List]bool{}, line); err != nil {
			return err
		}
	}
	return nil
}

func resolveList(l *List, ids map[string]*List, done map[*List]bool, line func(*List) int) error {
	done[l] = true
	if l.Len() > 0 && l.Name(0) == "" {
		if r, ok := l.At(0).(Reference); ok {
			if m := declTag.FindStringSubmatch(string(r)); m != nil {
				l.Remove(0)
				l.tagged = true
				mayCycle.Store(true)
				if m[1] != "" {
					ids[m[1]] = l
				}
			}
		}
	}
	for i := range l.Len() {
		switch v := l.At(i).(type) {
		case Reference:
			s := string(v)
			if !strings.HasPrefix(s, "<") {
				continue
			}
			if m := linkTag.FindStringSubmatch(s); m != nil {
				target := ids[m[1]]
				if target == nil {
					return tagError(l, line, "link tag %s names no list tagged <#%s> before it", s, m[1])
				}
				l.Set(i, target)
			} else if declTag.MatchString(s) {
				return tagError(l, line, "declaration tag %s is not the first element of its list", s)
			}
		case *List:
			if !done[v] {
				if err := resolveList(v, ids, done, line); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func tagError(l *List, line func(*List) int, format string, args ...any) error {
	n := 1
	if line != nil && line(l) > 0 {
		n = line(l)
	}
	return &SyntaxError{Line: n, Column: 1, Msg: fmt.Sprintf(format, args...)}
}
