package bpl

import (
	"iter"

	"github.com/brain4it/kafkabpl/value"
)

// scope holds the local variables of a frame. The first few live in the
// scope itself, which lives in the frame: a function call's parameters
// and loop variables cost no allocation beyond the frame's, where a map
// cost two. Further ones go to a map. The zero scope is empty.
type scope struct {
	n     int // variables inline, in names[:n] and vals[:n]
	names [inlineLocals]string
	vals  [inlineLocals]any
	more  map[string]any // the variables beyond the inline ones
}

// inlineLocals is how many variables a scope holds without a map: most
// functions have fewer parameters and locals.
const inlineLocals = 4

// get returns the variable's value, and whether it is set. A parameter
// bound to a lazy argument (see Function.Call) is made here, at its first
// read, and kept.
func (s *scope) get(name string) (any, bool) {
	for i := range s.n {
		if s.names[i] == name {
			if lv, ok := s.vals[i].(*value.Lazy); ok {
				s.vals[i] = value.Force(lv)
			}
			return s.vals[i], true
		}
	}
	if s.more == nil { // most scopes: a global's every read comes here first
		return nil, false
	}
	v, ok := s.more[name]
	if lv, lazy := v.(*value.Lazy); lazy {
		v = value.Force(lv)
		s.more[name] = v
	}
	return v, ok
}

// has reports whether the variable is set, making nothing.
func (s *scope) has(name string) bool {
	for i := range s.n {
		if s.names[i] == name {
			return true
		}
	}
	_, ok := s.more[name]
	return ok
}

// set sets the variable, adding it when it is not there.
func (s *scope) set(name string, v any) {
	for i := range s.n {
		if s.names[i] == name {
			s.vals[i] = v
			return
		}
	}
	if _, ok := s.more[name]; ok || s.n == inlineLocals {
		if s.more == nil {
			s.more = map[string]any{}
		}
		s.more[name] = v
		return
	}
	s.names[s.n], s.vals[s.n] = name, v
	s.n++
}

// setIfSet sets the variable if it is set, and reports whether it was.
func (s *scope) setIfSet(name string, v any) bool {
	for i := range s.n {
		if s.names[i] == name {
			s.vals[i] = v
			return true
		}
	}
	if s.more == nil {
		return false
	}
	if _, ok := s.more[name]; ok {
		s.more[name] = v
		return true
	}
	return false
}

// del removes the variable and reports whether it was set.
func (s *scope) del(name string) bool {
	for i := range s.n {
		if s.names[i] == name {
			last := s.n - 1
			s.names[i], s.vals[i] = s.names[last], s.vals[last]
			s.names[last], s.vals[last] = "", nil
			s.n = last
			return true
		}
	}
	if _, ok := s.more[name]; ok {
		delete(s.more, name)
		return true
	}
	return false
}

// len returns the number of variables.
func (s *scope) len() int { return s.n + len(s.more) }

// all iterates over the variables, in no set order, making lazy ones.
func (s *scope) all() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		for i := range s.n {
			v, _ := s.get(s.names[i])
			if !yield(s.names[i], v) {
				return
			}
		}
		for name := range s.more {
			v, _ := s.get(name)
			if !yield(name, v) {
				return
			}
		}
	}
}
