package bpl

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/brain4it/kafkabpl"
)

// brain4it's tags for lists that appear more than once in a value, or in
// themselves: its printer writes such a list, where it first appears, with
// a declaration tag, (<#1> 1 2 3), and every other place it appears as a
// link, <@1>; its reader gives back the one list for both. kafkabpl's
// reader reads a tag as a reference and its printer knows none, so this
// file resolves the tags after reading (resolveTags) and writes them when
// printing (formatValue). brain4it's structure tags, <#1:2> and <#:2>
// (lists sharing their names' structure, a memory saving), are read as
// their data tag alone, and never written.
//
// A list read with a declaration tag is shared on purpose: evaluating it
// gives the list itself, as brain4it does for every data list, rather than
// a copy (copyData keeps it), so that (=== (<#1> 1 2 3) <@1>) is true and
// code that holds a cyclic list does not copy it for ever.

var (
	declTag = regexp.MustCompile(`^<#([0-9A-Za-z_]*)(?::[0-9A-Za-z_]+)?>$`)
	linkTag = regexp.MustCompile(`^<@([0-9A-Za-z_]+)>$`)
)

// tagged holds the lists read with a declaration tag, weakly: a list
// leaves it when it is collected.
var tagged struct {
	m sync.Map // weak.Pointer[kafkabpl.List] -> struct{}
	n atomic.Int64
}

func markTagged(l *kafkabpl.List) {
	k := weak.Make(l)
	if _, loaded := tagged.m.LoadOrStore(k, struct{}{}); loaded {
		return
	}
	tagged.n.Add(1)
	runtime.AddCleanup(l, func(k weak.Pointer[kafkabpl.List]) {
		tagged.m.Delete(k)
		tagged.n.Add(-1)
	}, k)
}

// isTagged reports whether l was read with a declaration tag.
func isTagged(l *kafkabpl.List) bool {
	if tagged.n.Load() == 0 {
		return false
	}
	_, ok := tagged.m.Load(weak.Make(l))
	return ok
}

// resolveTags rewrites values as read by kafkabpl's reader: a list whose
// first element is a declaration tag loses it and is registered under its
// id; a link tag is replaced by the list registered under its id, which
// must come before it in the text. Tags are resolved within each top-level
// value, as brain4it's reader reads one value at a time. line gives a
// list's line for the error, when known.
func resolveTags(vs []any, line func(*kafkabpl.List) int) error {
	for _, v := range vs {
		l, ok := v.(*kafkabpl.List)
		if !ok {
			if r, ok := v.(kafkabpl.Reference); ok && (declTag.MatchString(string(r)) || linkTag.MatchString(string(r))) {
				return &kafkabpl.SyntaxError{Line: 1, Column: 1, Msg: fmt.Sprintf("tag %s outside a list", r)}
			}
			continue
		}
		if err := resolveList(l, map[string]*kafkabpl.List{}, map[*kafkabpl.List]bool{}, line); err != nil {
			return err
		}
	}
	return nil
}

func resolveList(l *kafkabpl.List, ids map[string]*kafkabpl.List, done map[*kafkabpl.List]bool, line func(*kafkabpl.List) int) error {
	done[l] = true
	if l.Len() > 0 && l.Name(0) == "" {
		if r, ok := l.At(0).(kafkabpl.Reference); ok {
			if m := declTag.FindStringSubmatch(string(r)); m != nil {
				l.Remove(0)
				markTagged(l)
				if m[1] != "" {
					ids[m[1]] = l
				}
			}
		}
	}
	for i := range l.Len() {
		switch v := l.At(i).(type) {
		case kafkabpl.Reference:
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
		case *kafkabpl.List:
			if !done[v] {
				if err := resolveList(v, ids, done, line); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func tagError(l *kafkabpl.List, line func(*kafkabpl.List) int, format string, args ...any) error {
	n := 1
	if line != nil && line(l) > 0 {
		n = line(l)
	}
	return &kafkabpl.SyntaxError{Line: n, Column: 1, Msg: fmt.Sprintf(format, args...)}
}

// parseValues is kafkabpl.Parse with brain4it's tags resolved.
func parseValues(src string) ([]any, error) {
	vs, err := kafkabpl.Parse(src)
	if err != nil {
		return nil, err
	}
	if strings.Contains(src, "<") {
		if err := resolveTags(vs, nil); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

// formatValue is kafkabpl.Format, but for a list that holds a list more
// than once, or itself: that one is written with brain4it's tags, which
// parse reads back to the same structure, and the text ends however the
// lists are linked.
func formatValue(v any) string {
	l, ok := v.(*kafkabpl.List)
	if !ok {
		return kafkabpl.Format(v)
	}
	refs := map[*kafkabpl.List]int{}
	countRefs(l, refs)
	shared := false
	for _, n := range refs {
		if n > 1 {
			shared = true
			break
		}
	}
	if !shared {
		return kafkabpl.Format(v)
	}
	p := &tagPrinter{refs: refs, ids: map[*kafkabpl.List]int{}}
	p.list(l)
	return p.b.String()
}

// countRefs counts, for l and each list within it, the places it appears,
// walking each list once.
func countRefs(l *kafkabpl.List, refs map[*kafkabpl.List]int) {
	stack := []*kafkabpl.List{l}
	refs[l] = 1
	for len(stack) > 0 {
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range l.Values() {
			if sub, ok := e.(*kafkabpl.List); ok {
				refs[sub]++
				if refs[sub] == 1 {
					stack = append(stack, sub)
				}
			}
		}
	}
}

type tagPrinter struct {
	b    strings.Builder
	refs map[*kafkabpl.List]int
	ids  map[*kafkabpl.List]int // lists written so far: their tag id, or 0
	next int
}

func (p *tagPrinter) list(l *kafkabpl.List) {
	if id, seen := p.ids[l]; seen {
		p.b.WriteString("<@" + strconv.Itoa(id) + ">")
		return
	}
	p.b.WriteByte('(')
	id := 0
	if p.refs[l] > 1 {
		p.next++
		id = p.next
		p.b.WriteString("<#" + strconv.Itoa(id) + ">")
		if l.Len() > 0 {
			p.b.WriteByte(' ')
		}
	}
	p.ids[l] = id
	for i := range l.Len() {
		if i > 0 {
			p.b.WriteByte(' ')
		}
		if name := l.Name(i); name != "" {
			p.b.WriteString(kafkabpl.Format(name))
			p.b.WriteString(" => ")
		}
		if sub, ok := l.At(i).(*kafkabpl.List); ok {
			p.list(sub)
		} else {
			p.b.WriteString(kafkabpl.Format(l.At(i)))
		}
	}
	p.b.WriteByte(')')
}

// cyclicArg checks, once lists have been read with tags, that no argument
// of a library function contains itself: the library's own printer and
// serializers follow lists without end, so such a list is an
// InvalidArgument before it gets there.
func (t *task) cyclicArg(f *frame, fn string, args *kafkabpl.List) error {
	if tagged.n.Load() == 0 {
		return nil
	}
	for i, v := range args.Values() {
		if l, ok := v.(*kafkabpl.List); ok && cyclic(l, map[*kafkabpl.List]int{}) {
			return t.errorf(f, "InvalidArgument", "%s: argument %d is a list that contains itself, which the library cannot take", fn, i+1)
		}
	}
	return nil
}

// cyclic reports whether l contains itself at some depth; state is 1 for
// the lists being walked, 2 for those done.
func cyclic(l *kafkabpl.List, state map[*kafkabpl.List]int) bool {
	state[l] = 1
	for _, e := range l.Values() {
		if sub, ok := e.(*kafkabpl.List); ok {
			switch state[sub] {
			case 1:
				return true
			case 0:
				if cyclic(sub, state) {
					return true
				}
			}
		}
	}
	state[l] = 2
	return false
}

// taggedText is a list that holds a list more than once, or itself, as
// Run hands it to its callback: its String method writes it with
// brain4it's tags, and kafkabpl.Format, which would write a shared list
// once per place and never end a cyclic one, writes what String gives.
type taggedText struct{ l *kafkabpl.List }

// String writes the list with brain4it's tags.
func (x taggedText) String() string { return formatValue(x.l) }

// List returns the list itself.
func (x taggedText) List() *kafkabpl.List { return x.l }

// forCallback is v as Run gives it to its callback: as it is, but for a
// list that holds a list more than once, which is a taggedText.
func forCallback(v any) any {
	if l, ok := v.(*kafkabpl.List); ok && sharesLists(l) {
		return taggedText{l}
	}
	return v
}

// sharesLists reports whether a list appears more than once in l.
func sharesLists(l *kafkabpl.List) bool {
	refs := map[*kafkabpl.List]int{}
	countRefs(l, refs)
	for _, n := range refs {
		if n > 1 {
			return true
		}
	}
	return false
}
