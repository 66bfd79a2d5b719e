package registry

import (
	"encoding/json"
	"net/http"
	"slices"
)

func errInvalidLevel() error {
	return errf(http.StatusUnprocessableEntity, codeInvalidCompatLevel,
		"Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive")
}

type configJSON struct {
	CompatibilityLevel string  `json:"compatibilityLevel"`
	CompatibilityGroup *string `json:"compatibilityGroup,omitempty"`
	Normalize          *bool   `json:"normalize,omitempty"`
}

// getConfig: GET /config and GET /config/{subject} (a subject without its
// own level: 40408, unless defaultToGlobal=true).
func (r *Registry) getConfig(req *request) (any, error) {
	global := configJSON{CompatibilityLevel: r.compat}
	if r.normalize {
		global.Normalize = &r.normalize
	}
	if r.group != "" {
		global.CompatibilityGroup = &r.group
	}
	if req.PathValue("subject") == "" {
		return global, nil
	}
	subject := subjectOf(req)
	if s := r.subjects[subject]; s != nil && (s.compat != "" || s.normalize != nil || s.group != nil) {
		out := configJSON{CompatibilityLevel: s.compat, Normalize: s.normalize, CompatibilityGroup: s.group}
		if out.CompatibilityLevel == "" {
			out.CompatibilityLevel = r.compat
		}
		return out, nil
	}
	if flag(req, "defaultToGlobal") {
		return global, nil
	}
	return nil, errf(http.StatusNotFound, codeCompatNotConfigured, "Subject '%s' does not have subject-level compatibility configured", subject)
}

// putConfig: PUT /config and PUT /config/{subject}.
func (r *Registry) putConfig(req *request) (any, error) {
	var b struct {
		Compatibility string  `json:"compatibility"`
		Normalize     *bool   `json:"normalize"`
		Group         *string `json:"compatibilityGroup"`
	}
	if err := json.Unmarshal(req.body, &b); err != nil {
		return nil, errInvalidLevel()
	}
	level, ok := validLevel(b.Compatibility)
	if !ok && !(b.Compatibility == "" && (b.Normalize != nil || b.Group != nil)) {
		return nil, errInvalidLevel()
	}
	subject := ""
	if req.PathValue("subject") != "" {
		subject = subjectOf(req)
		if err := validSubject(subject); err != nil {
			return nil, err
		}
		if r.readOnly(subject) && req.replay == nil {
			return nil, errReadOnly(subject)
		}
	}
	err := r.commit(req, 0, 0, func() {
		if subject == "" {
			if ok {
				r.compat = level
			}
			if b.Normalize != nil {
				r.normalize = *b.Normalize
			}
			if b.Group != nil {
				r.group = *b.Group
			}
			return
		}
		s := r.subject(subject)
		if ok {
			s.compat = level
		}
		if b.Normalize != nil {
			s.normalize = b.Normalize
		}
		if b.Group != nil {
			s.group = b.Group
		}
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if ok {
		out["compatibility"] = level
	}
	if b.Normalize != nil {
		out["normalize"] = *b.Normalize
	}
	if b.Group != nil {
		out["compatibilityGroup"] = *b.Group
	}
	return out, nil
}

// subject returns a subject's record, made if needed.
func (r *Registry) subject(name string) *subject {
	s := r.subjects[name]
	if s == nil {
		s = &subject{}
		r.subjects[name] = s
	}
	return s
}

// deleteConfig: DELETE /config (back to BACKWARD) and DELETE
// /config/{subject} (back to the global level); it answers the level
// deleted.
func (r *Registry) deleteConfig(req *request) (any, error) {
	if req.PathValue("subject") == "" {
		prev := r.compat
		err := r.commit(req, 0, 0, func() { r.compat, r.normalize, r.group = levelBackward, false, "" })
		if err != nil {
			return nil, err
		}
		return configJSON{CompatibilityLevel: prev}, nil
	}
	subject := subjectOf(req)
	s := r.subjects[subject]
	if s == nil || (s.compat == "" && s.normalize == nil && s.group == nil) {
		return nil, errSubjectNotFound(subject)
	}
	prev := configJSON{CompatibilityLevel: s.compat, Normalize: s.normalize, CompatibilityGroup: s.group}
	err := r.commit(req, 0, 0, func() { s.compat, s.normalize, s.group = "", nil, nil })
	if err != nil {
		return nil, err
	}
	return prev, nil
}

// getMode: GET /mode and GET /mode/{subject} (a subject without its own
// mode: 40409, unless defaultToGlobal=true).
func (r *Registry) getMode(req *request) (any, error) {
	if req.PathValue("subject") == "" {
		return map[string]string{"mode": r.mode}, nil
	}
	subject := subjectOf(req)
	if s := r.subjects[subject]; s != nil && s.mode != "" {
		return map[string]string{"mode": s.mode}, nil
	}
	if flag(req, "defaultToGlobal") {
		return map[string]string{"mode": r.mode}, nil
	}
	return nil, errf(http.StatusNotFound, codeModeNotConfigured, "Subject '%s' does not have subject-level mode configured", subject)
}

// putMode: PUT /mode and PUT /mode/{subject}; IMPORT only where no
// schema is yet, unless force=true.
func (r *Registry) putMode(req *request) (any, error) {
	var b struct {
		Mode string `json:"mode"`
	}
	json.Unmarshal(req.body, &b)
	mode, ok := validMode(b.Mode)
	if !ok {
		return nil, errf(http.StatusUnprocessableEntity, codeInvalidMode, "Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, and IMPORT.")
	}
	subject := ""
	if req.PathValue("subject") != "" {
		subject = subjectOf(req)
		if err := validSubject(subject); err != nil {
			return nil, err
		}
	}
	if mode == modeImport && !flag(req, "force") && req.replay == nil {
		for name, s := range r.subjects {
			if (subject == "" || name == subject) && len(s.versions) > 0 {
				return nil, errf(http.StatusUnprocessableEntity, codeNotPermitted, "Cannot import since found existing subjects")
			}
		}
	}
	err := r.commit(req, 0, 0, func() {
		if subject == "" {
			r.mode = mode
		} else {
			r.subject(subject).mode = mode
		}
	})
	if err != nil {
		return nil, err
	}
	return map[string]string{"mode": mode}, nil
}

// deleteMode: DELETE /mode (back to READWRITE) and DELETE /mode/{subject}.
func (r *Registry) deleteMode(req *request) (any, error) {
	if req.PathValue("subject") == "" {
		prev := r.mode
		if err := r.commit(req, 0, 0, func() { r.mode = modeReadWrite }); err != nil {
			return nil, err
		}
		return map[string]string{"mode": prev}, nil
	}
	subject := subjectOf(req)
	s := r.subjects[subject]
	if s == nil || s.mode == "" {
		return nil, errSubjectNotFound(subject)
	}
	prev := s.mode
	if err := r.commit(req, 0, 0, func() { s.mode = "" }); err != nil {
		return nil, err
	}
	return map[string]string{"mode": prev}, nil
}

// compatibility: POST /compatibility/subjects/{subject}/versions[/{version}]:
// whether a schema may follow the version named ("latest": the newest),
// or without one the versions the subject's level checks.
func (r *Registry) compatibility(req *request) (any, error) {
	subject := subjectOf(req)
	b, typ, err := readSchema(req)
	if err != nil {
		return nil, err
	}
	verbose := flag(req, "verbose")
	answer := func(msgs []string) any {
		if !verbose {
			return map[string]any{"is_compatible": len(msgs) == 0}
		}
		if msgs == nil {
			msgs = []string{}
		}
		return map[string]any{"is_compatible": len(msgs) == 0, "messages": msgs}
	}
	var previous []*version
	if sub := r.subjects[subject]; sub != nil {
		previous = sub.live()
	}
	level := r.levelOf(subject)
	if which := req.PathValue("version"); which != "" {
		n, err := versionOf(which)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(previous, func(v *version) bool { return v.version == n })
		switch {
		case n == 0 && len(previous) > 0:
			previous = previous[len(previous)-1:]
		case n == 0:
		case i < 0:
			return nil, errVersionNotFound(n)
		default:
			previous = previous[i : i+1]
		}
	}
	p, err := r.parse(typ, *b.Schema, b.References)
	if err != nil {
		if verbose {
			return answer([]string{err.Error()}), nil
		}
		return nil, err
	}
	return answer(r.check(level, typ, p, r.inGroup(subject, b.Metadata, previous))), nil
}
