package bpl

import (
	"strings"

	"github.com/brain4it/kafkabpl/value"
)

// The list family, continued: match looks for a pattern at any depth,
// and merge fills a template with values.

// (match list pattern action) looks for pattern in list and in each of its
// sublists, at any depth, in order (the list itself first, each sublist
// before its own sublists). An element of pattern that is a reference
// ending in ? (x?) matches any one element, a list too; one ending in ...
// (x...) any run of elements, the longest first; a sublist of pattern
// matches a sublist whose elements match it; anything else matches an
// equal element (see =, names aside). A variable that appears twice must
// match equal values. For each match, action is evaluated with locals set:
// each variable to what it matched (a run as a list), match$ to the list
// that matched, match_parent$ and match_position$ to the list that holds it
// and its index there (null and -1 for list itself), and match_map$ to a
// list of the variables by name. The search stops when action gives true;
// without action, at the first match. match gives whether it stopped.
// Null is the empty list. Lists that action changes are searched as they
// are then. A list within itself is not searched again inside itself,
// and a pattern that contains itself is an InvalidArgument.
func biMatch(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 2, 3); err != nil {
		return nil, err
	}
	lv, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	pv, err := t.eval(f, call.At(2))
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "match", lv, true)
	if err != nil {
		return nil, err
	}
	p, ok := pv.(*value.List)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "match: the pattern is %s, want a list", value.Describe(pv))
	}
	cycles := value.MayCycle()
	if cycles && value.Cyclic(p) {
		// its sublists would be matched without end
		return nil, t.errorf(f, "InvalidArgument", "match: the pattern is a list that contains itself")
	}
	m := &matcher{t: t, f: f, action: true}
	if call.Len() > 3 {
		m.action = call.At(3)
	}
	stop, err := m.try(l, nil, -1, p)
	stack := []matchLevel{{l, 0}}
	for !stop && err == nil && len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.i >= top.l.Len() {
			stack = stack[:len(stack)-1]
			continue
		}
		parent, i := top.l, top.i
		top.i++
		child, ok := parent.At(i).(*value.List)
		if !ok || cycles && onStack(stack, child) {
			continue // a list within itself is searched once on each path
		}
		if err = t.checkCtx(f); err == nil {
			stop, err = m.try(child, parent, i, p)
			stack = append(stack, matchLevel{child, 0})
		}
	}
	if err != nil {
		return nil, err
	}
	return stop, nil
}

// matchLevel is a list match searches and the index of its next element.
type matchLevel struct {
	l *value.List
	i int
}

// onStack reports whether l is one of the lists being searched on the
// way down to the current one.
func onStack(stack []matchLevel, l *value.List) bool {
	for _, e := range stack {
		if e.l == l {
			return true
		}
	}
	return false
}

// matcher is one run of match: its action and the variables bound so far.
type matcher struct {
	t      *task
	f      *frame
	action any
	binds  []matchBind
}

// matchBind is a bound variable: a single value, or the run from..to of
// seq.
type matchBind struct {
	name     string
	v        any
	seq      *value.List
	from, to int
}

// value is what the variable matched; a run as a new list.
func (b matchBind) value() any {
	if b.seq == nil {
		return b.v
	}
	out := &value.List{}
	for i := b.from; i < b.to && i < b.seq.Len(); i++ {
		out.AppendNamed(b.seq.Name(i), b.seq.At(i))
	}
	return out
}

func (m *matcher) bound(name string) (matchBind, bool) {
	for _, b := range m.binds {
		if b.name == name {
			return b, true
		}
	}
	return matchBind{}, false
}

// matchVar tells whether pattern element v is a variable: "?" for one
// element, "..." for a run.
func matchVar(v any) (name, kind string) {
	r, ok := v.(value.Reference)
	switch {
	case !ok:
		return "", ""
	case strings.HasSuffix(string(r), "?"):
		return string(r), "?"
	case strings.HasSuffix(string(r), "..."):
		return string(r), "..."
	}
	return "", ""
}

// try matches pattern against the whole of l, running the action for each
// way it matches until one gives true.
func (m *matcher) try(l, parent *value.List, pos int, pattern *value.List) (bool, error) {
	return m.seq(l, 0, pattern, 0, func() (bool, error) {
		for _, b := range m.binds {
			m.f.locals.set(b.name, b.value())
		}
		vars := &value.List{}
		for _, b := range m.binds {
			v, _ := m.f.locals.get(b.name)
			vars.AppendNamed(b.name, v)
		}
		m.f.locals.set("match$", l)
		if parent != nil {
			m.f.locals.set("match_parent$", parent)
		} else {
			m.f.locals.set("match_parent$", nil)
		}
		m.f.locals.set("match_position$", int64(pos))
		m.f.locals.set("match_map$", vars)
		v, err := m.t.eval(m.f, m.action)
		return err == nil && truthy(v), err
	})
}

// seq matches the elements of l from li on against those of p from pi on,
// and when all match calls k, which goes on with the rest of the lists
// that hold them (or runs the action). It gives true when the search is to
// stop. Variables it binds are unbound when it returns.
func (m *matcher) seq(l *value.List, li int, p *value.List, pi int, k func() (bool, error)) (bool, error) {
	mark := len(m.binds)
	defer func() { m.binds = m.binds[:mark] }()
	for ; pi < p.Len(); pi, li = pi+1, li+1 {
		if err := m.t.checkCtx(m.f); err != nil {
			return false, err
		}
		pe := p.At(pi)
		name, kind := matchVar(pe)
		if kind == "..." {
			return m.run(l, li, p, pi, name, k)
		}
		if li >= l.Len() {
			return false, nil
		}
		le := l.At(li)
		if kind == "?" {
			if b, ok := m.bound(name); ok {
				if !equal(le, b.value(), false, nil) {
					return false, nil
				}
			} else {
				m.binds = append(m.binds, matchBind{name: name, v: le})
			}
			continue
		}
		ll, lok := le.(*value.List)
		pl, pok := pe.(*value.List)
		if lok && pok {
			return m.seq(ll, 0, pl, 0, func() (bool, error) {
				return m.seq(l, li+1, p, pi+1, k)
			})
		}
		if !equal(le, pe, false, nil) {
			return false, nil
		}
	}
	if li < l.Len() {
		return false, nil
	}
	return k()
}

// run matches the variable x... at p[pi] against a run of l from li: the
// run it is bound to, or else each run in turn, the longest first.
func (m *matcher) run(l *value.List, li int, p *value.List, pi int, name string, k func() (bool, error)) (bool, error) {
	if b, ok := m.bound(name); ok {
		want, _ := b.value().(*value.List)
		n := want.Len()
		if li+n > l.Len() {
			return false, nil
		}
		for i := range n {
			if !equal(l.At(li+i), want.At(i), false, nil) {
				return false, nil
			}
		}
		return m.seq(l, li+n, p, pi+1, k)
	}
	for end := l.Len(); end >= li; end-- {
		if err := m.t.checkCtx(m.f); err != nil {
			return false, err
		}
		if end = min(end, l.Len()); end < li { // the action shortened l
			break
		}
		m.binds = append(m.binds, matchBind{name: name, seq: l, from: li, to: end})
		stop, err := m.seq(l, end, p, pi+1, k)
		m.binds = m.binds[:len(m.binds)-1]
		if stop || err != nil {
			return stop, err
		}
	}
	return false, nil
}

// (merge list variables) gives a copy of list, at every depth, in which
// each reference that names an element of the list variables is replaced by
// that element's value; an unnamed reference ending in ... whose value is
// a list is replaced by its elements (a named one of those replaces the
// element of that name, as append does). (merge x variables) gives the
// value of the reference x, or x when it names none; any other value as it
// is. Null or no variables leave the references as they are. A list
// that contains itself has no such copy: it is an InvalidArgument.
func biMerge(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	vars := &value.List{}
	if args.Len() > 1 && args.At(1) != nil {
		if vars, err = t.listArg(f, "merge", args.At(1), false); err != nil {
			return nil, err
		}
	}
	switch x := args.At(0).(type) {
	case value.Reference:
		if v, ok := vars.Get(string(x)); ok {
			return v, nil
		}
	case *value.List:
		if value.MayCycle() && value.Cyclic(x) {
			return nil, t.errorf(f, "InvalidArgument", "merge: the list contains itself, so its copy would not end")
		}
		out := &value.List{}
		budget := maxConcatElems
		if err := t.mergeInto(f, x, out, vars, &budget); err != nil {
			return nil, err
		}
		return out, nil
	}
	return args.At(0), nil
}

// mergeInto adds the merge of src to dst; budget is how many more elements
// the result may have.
func (t *task) mergeInto(f *frame, src, dst, vars *value.List, budget *int) error {
	if err := t.checkCtx(f); err != nil {
		return err
	}
	add := func(n int) error {
		if *budget -= n; *budget < 0 {
			return t.errorf(f, "InvalidArgument", "merge: result longer than %d elements", maxConcatElems)
		}
		return nil
	}
	for name, v := range src.All() {
		splice := false
		switch x := v.(type) {
		case value.Reference:
			if val, ok := vars.Get(string(x)); ok {
				v = val
				splice = strings.HasSuffix(string(x), "...")
			}
		case *value.List:
			sub := &value.List{}
			if err := t.mergeInto(f, x, sub, vars, budget); err != nil {
				return err
			}
			v = sub
		}
		if run, ok := v.(*value.List); ok && splice && name == "" {
			if err := add(run.Len()); err != nil {
				return err
			}
			for n, e := range run.All() {
				if n != "" {
					dst.Put(n, e)
				} else {
					dst.Append(e)
				}
			}
			continue
		}
		if err := add(1); err != nil {
			return err
		}
		dst.AppendNamed(name, v)
	}
	return nil
}
