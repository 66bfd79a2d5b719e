package registry

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// JSON Schema compatibility follows Confluent's rules (its strict policy)
// for the keywords that shape data: types, object properties under open
// and closed content models, required properties, additionalProperties,
// string, number and array bounds, enums, and oneOf/anyOf/allOf. An
// update can read data of the original unless a difference is missing
// from this list of compatible ones.
var jsonCompatible = map[string]bool{
	"ID_CHANGED": true, "DESCRIPTION_CHANGED": true, "TITLE_CHANGED": true, "DEFAULT_CHANGED": true,
	"SCHEMA_REMOVED": true, "TYPE_EXTENDED": true,
	"MAX_LENGTH_INCREASED": true, "MAX_LENGTH_REMOVED": true, "MIN_LENGTH_DECREASED": true, "MIN_LENGTH_REMOVED": true, "PATTERN_REMOVED": true,
	"MAXIMUM_INCREASED": true, "MAXIMUM_REMOVED": true, "MINIMUM_DECREASED": true, "MINIMUM_REMOVED": true,
	"EXCLUSIVE_MAXIMUM_INCREASED": true, "EXCLUSIVE_MAXIMUM_REMOVED": true, "EXCLUSIVE_MINIMUM_DECREASED": true, "EXCLUSIVE_MINIMUM_REMOVED": true,
	"MULTIPLE_OF_REDUCED": true, "MULTIPLE_OF_REMOVED": true,
	"REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED": true, "REQUIRED_ATTRIBUTE_REMOVED": true,
	"MAX_PROPERTIES_INCREASED": true, "MAX_PROPERTIES_REMOVED": true, "MIN_PROPERTIES_DECREASED": true, "MIN_PROPERTIES_REMOVED": true,
	"ADDITIONAL_PROPERTIES_ADDED": true, "ADDITIONAL_PROPERTIES_EXTENDED": true,
	"PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL": true, "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL": true,
	"OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL": true, "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL": true,
	"PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL": true, "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL": true,
	"PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL": true,
	"MAX_ITEMS_INCREASED": true, "MAX_ITEMS_REMOVED": true, "MIN_ITEMS_DECREASED": true, "MIN_ITEMS_REMOVED": true,
	"UNIQUE_ITEMS_REMOVED": true, "ADDITIONAL_ITEMS_ADDED": true, "ADDITIONAL_ITEMS_EXTENDED": true,
	"ENUM_ARRAY_EXTENDED": true, "COMBINED_TYPE_EXTENDED": true, "PRODUCT_TYPE_NARROWED": true, "SUM_TYPE_EXTENDED": true, "NOT_TYPE_NARROWED": true,
}

type jsonDifference struct{ kind, path string }

// jnode is a schema within a document: the document's URL resolves its
// $refs.
type jnode struct {
	v    any
	base *url.URL
	doc  *jsonSchema
}

type jsonDiff struct {
	active map[[2]string]bool // $ref pairs being compared: a cycle is taken as compatible
}

func (jsonFormat) canRead(reader, writer parsed) []string {
	o, u := writer.(*jsonSchema), reader.(*jsonSchema)
	d := &jsonDiff{active: map[[2]string]bool{}}
	var out []string
	for _, df := range d.compare(jnode{o.doc, jsonBase, o}, jnode{u.doc, jsonBase, u}, "#") {
		if !jsonCompatible[df.kind] {
			out = append(out, fmt.Sprintf(`{errorType:"%s", description:"Found an incompatible change at path '%s' between the {writer} schema and the {reader} schema"}`, df.kind, df.path))
		}
	}
	return out
}

func jsonCompatibleAll(diffs []jsonDifference) bool {
	for _, d := range diffs {
		if !jsonCompatible[d.kind] {
			return false
		}
	}
	return true
}

// deref follows a node's $ref chain; ref names where it led.
func (n jnode) deref() (jnode, string) {
	ref := ""
	for range 32 {
		m, ok := n.v.(map[string]any)
		if !ok {
			return n, ref
		}
		r, ok := m["$ref"].(string)
		if !ok {
			return n, ref
		}
		ru, err := url.Parse(r)
		if err != nil {
			return jnode{true, n.base, n.doc}, ref
		}
		target := n.base.ResolveReference(ru)
		frag := target.Fragment
		target.Fragment = ""
		var doc any
		if target.String() == jsonBase.String() {
			doc = n.doc.doc
		} else if d, ok := n.doc.refs[target.String()]; ok {
			doc = d
		} else {
			return jnode{true, n.base, n.doc}, ref
		}
		ref = target.String() + "#" + frag
		n = jnode{jsonPointer(doc, frag), target, n.doc}
	}
	return n, ref
}

func jsonPointer(doc any, frag string) any {
	if frag == "" || frag == "/" {
		return doc
	}
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := doc.(type) {
		case map[string]any:
			doc = v[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return true
			}
			doc = v[i]
		default:
			return true
		}
	}
	if doc == nil {
		return true
	}
	return doc
}

// jkind is a schema's kind, as Confluent's model tells them: empty
// (anything), false (nothing), combined, enum, const, not, or a type.
func jkind(v any) string {
	switch s := v.(type) {
	case bool:
		if s {
			return "empty"
		}
		return "false"
	case map[string]any:
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if _, ok := s[k]; ok {
				return "combined"
			}
		}
		if ts, ok := s["type"].([]any); ok && len(ts) > 1 {
			return "combined"
		}
		for _, k := range []string{"enum", "const", "not"} {
			if _, ok := s[k]; ok {
				return k
			}
		}
		t, _ := s["type"].(string)
		if ts, ok := s["type"].([]any); ok && len(ts) == 1 {
			t, _ = ts[0].(string)
		}
		switch t {
		case "integer":
			return "number"
		case "":
			return jinfer(s)
		}
		return t
	}
	return "empty"
}

// jinfer is the type a schema without one implies by its keywords.
func jinfer(s map[string]any) string {
	for kind, keys := range map[string][]string{
		"object": {"properties", "required", "additionalProperties", "patternProperties", "minProperties", "maxProperties"},
		"array":  {"items", "minItems", "maxItems", "uniqueItems", "additionalItems"},
		"string": {"minLength", "maxLength", "pattern"},
		"number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
	} {
		for _, k := range keys {
			if _, ok := s[k]; ok {
				return kind
			}
		}
	}
	return "empty"
}

// branches is a combined schema's criterion and subschemas.
func (n jnode) branches() (string, []jnode) {
	m := n.v.(map[string]any)
	if ts, ok := m["type"].([]any); ok && len(ts) > 1 {
		var out []jnode
		for _, t := range ts {
			c := map[string]any{}
			for k, v := range m {
				c[k] = v
			}
			c["type"] = t
			out = append(out, jnode{c, n.base, n.doc})
		}
		return "anyOf", out
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if bs, ok := m[k].([]any); ok {
			var out []jnode
			for _, b := range bs {
				out = append(out, jnode{b, n.base, n.doc})
			}
			return k, out
		}
	}
	return "allOf", nil
}

func (d *jsonDiff) compare(o, u jnode, path string) []jsonDifference {
	o, oref := o.deref()
	u, uref := u.deref()
	if oref != "" || uref != "" {
		key := [2]string{oref, uref}
		if d.active[key] {
			return nil
		}
		d.active[key] = true
		defer delete(d.active, key)
	}
	ok, uk := jkind(o.v), jkind(u.v)
	add := func(out []jsonDifference, kind, p string) []jsonDifference {
		return append(out, jsonDifference{kind, p})
	}
	if ok != "combined" && uk == "combined" {
		crit, bs := u.branches()
		if len(bs) == 1 {
			if sub := d.compare(o, bs[0], path); jsonCompatibleAll(sub) {
				return sub
			}
		} else if crit != "allOf" {
			for _, b := range bs {
				if sub := d.compare(o, b, path); jsonCompatibleAll(sub) {
					return add(sub, "SUM_TYPE_EXTENDED", path)
				}
			}
		}
	} else if ok == "combined" && uk != "combined" {
		crit, bs := o.branches()
		if len(bs) == 1 {
			if sub := d.compare(bs[0], u, path); jsonCompatibleAll(sub) {
				return sub
			}
		} else if crit == "allOf" {
			for _, b := range bs {
				if sub := d.compare(b, u, path); jsonCompatibleAll(sub) {
					return add(sub, "PRODUCT_TYPE_NARROWED", path)
				}
			}
		}
	}
	if ok != uk {
		if ok == "false" || uk == "empty" {
			return nil
		}
		return []jsonDifference{{"TYPE_CHANGED", path}}
	}
	om, _ := o.v.(map[string]any)
	um, _ := u.v.(map[string]any)
	var out []jsonDifference
	for _, a := range []struct{ key, kind string }{{"$id", "ID_CHANGED"}, {"title", "TITLE_CHANGED"}, {"description", "DESCRIPTION_CHANGED"}, {"default", "DEFAULT_CHANGED"}} {
		if !reflect.DeepEqual(om[a.key], um[a.key]) {
			out = add(out, a.kind, path)
		}
	}
	switch ok {
	case "string":
		out = append(out, jbound(om, um, "maxLength", path)...)
		out = append(out, jbound(om, um, "minLength", path)...)
		if op, up := om["pattern"], um["pattern"]; !reflect.DeepEqual(op, up) {
			switch {
			case up == nil:
				out = add(out, "PATTERN_REMOVED", path)
			case op == nil:
				out = add(out, "PATTERN_ADDED", path)
			default:
				out = add(out, "PATTERN_CHANGED", path)
			}
		}
	case "number":
		out = append(out, jbound(om, um, "maximum", path)...)
		out = append(out, jbound(om, um, "minimum", path)...)
		out = append(out, jbound(om, um, "exclusiveMaximum", path)...)
		out = append(out, jbound(om, um, "exclusiveMinimum", path)...)
		out = append(out, jmultiple(om, um, path)...)
		oi, ui := jtype(om) == "integer", jtype(um) == "integer"
		if oi && !ui {
			out = add(out, "TYPE_EXTENDED", path)
		} else if !oi && ui {
			out = add(out, "TYPE_NARROWED", path)
		}
	case "object":
		out = append(out, d.object(o, u, om, um, path)...)
	case "array":
		out = append(out, d.array(o, u, om, um, path)...)
	case "enum":
		oe, _ := om["enum"].([]any)
		ue, _ := um["enum"].([]any)
		switch {
		case jsubset(oe, ue) && jsubset(ue, oe):
		case jsubset(oe, ue):
			out = add(out, "ENUM_ARRAY_EXTENDED", path)
		case jsubset(ue, oe):
			out = add(out, "ENUM_ARRAY_NARROWED", path)
		default:
			out = add(out, "ENUM_ARRAY_CHANGED", path)
		}
	case "const":
		if !reflect.DeepEqual(om["const"], um["const"]) {
			out = add(out, "ENUM_ARRAY_CHANGED", path)
		}
	case "not":
		// not turns the direction: the update accepts more where its
		// negated schema accepts less.
		if sub := d.compare(jnode{um["not"], u.base, u.doc}, jnode{om["not"], o.base, o.doc}, path+"/not"); !jsonCompatibleAll(sub) {
			out = add(out, "NOT_TYPE_EXTENDED", path)
		} else if len(sub) > 0 {
			out = add(out, "NOT_TYPE_NARROWED", path)
		}
	case "combined":
		out = append(out, d.combined(o, u, path)...)
	}
	return out
}

func jtype(m map[string]any) string {
	if t, ok := m["type"].(string); ok {
		return t
	}
	if ts, ok := m["type"].([]any); ok && len(ts) == 1 {
		t, _ := ts[0].(string)
		return t
	}
	return ""
}

func jnum(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// jbound compares a bound; which changes are compatible (a maximum
// raised, a minimum lowered, either removed) jsonCompatible says.
func jbound(om, um map[string]any, key, path string) []jsonDifference {
	name := strings.ToUpper(strings.NewReplacer("maxLength", "max_Length", "minLength", "min_Length", "exclusiveMaximum", "exclusive_Maximum",
		"exclusiveMinimum", "exclusive_Minimum", "maxItems", "max_Items", "minItems", "min_Items", "maxProperties", "max_Properties",
		"minProperties", "min_Properties").Replace(key))
	ov, oHas := jnum(om[key])
	uv, uHas := jnum(um[key])
	p := path + "/" + key
	switch {
	case !oHas && !uHas:
		return nil
	case !oHas:
		return []jsonDifference{{name + "_ADDED", p}}
	case !uHas:
		return []jsonDifference{{name + "_REMOVED", p}}
	case ov == uv:
		return nil
	case uv > ov:
		return []jsonDifference{{name + "_INCREASED", p}}
	}
	return []jsonDifference{{name + "_DECREASED", p}}
}

func jmultiple(om, um map[string]any, path string) []jsonDifference {
	ov, oHas := jnum(om["multipleOf"])
	uv, uHas := jnum(um["multipleOf"])
	p := path + "/multipleOf"
	switch {
	case !oHas && !uHas, oHas && uHas && ov == uv:
		return nil
	case !oHas:
		return []jsonDifference{{"MULTIPLE_OF_ADDED", p}}
	case !uHas:
		return []jsonDifference{{"MULTIPLE_OF_REMOVED", p}}
	case uv != 0 && ov/uv == float64(int64(ov/uv)):
		return []jsonDifference{{"MULTIPLE_OF_REDUCED", p}}
	case ov != 0 && uv/ov == float64(int64(uv/ov)):
		return []jsonDifference{{"MULTIPLE_OF_EXPANDED", p}}
	}
	return []jsonDifference{{"MULTIPLE_OF_CHANGED", p}}
}

func jsubset(a, b []any) bool {
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y any) bool { return reflect.DeepEqual(x, y) }) {
			return false
		}
	}
	return true
}

// open reports whether an object schema allows any other property: no
// additionalProperties (or true), and no patternProperties.
func jopen(m map[string]any) bool {
	if _, ok := m["patternProperties"]; ok {
		return false
	}
	ap, ok := m["additionalProperties"]
	return !ok || ap == true
}

// jpartial is the schema an object schema gives a property it does not
// name: a matching patternProperties', else additionalProperties'.
func jpartial(m map[string]any, prop string) (any, bool) {
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for pat, s := range pp {
			if re, err := regexp.Compile(pat); err == nil && re.MatchString(prop) {
				return s, true
			}
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		return ap, true
	}
	return nil, false
}

func jrequired(m map[string]any, prop string) bool {
	req, _ := m["required"].([]any)
	return slices.Contains(req, any(prop))
}

func jhasDefault(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, has := m["default"]
	return has
}

func (d *jsonDiff) object(o, u jnode, om, um map[string]any, path string) []jsonDifference {
	var out []jsonDifference
	add := func(kind, p string) { out = append(out, jsonDifference{kind, p}) }
	op, _ := om["properties"].(map[string]any)
	up, _ := um["properties"].(map[string]any)
	for _, k := range sortedKeys(op) {
		if _, ok := up[k]; !ok {
			continue
		}
		p := path + "/required/" + k
		switch or, ur := jrequired(om, k), jrequired(um, k); {
		case or && !ur:
			add("REQUIRED_ATTRIBUTE_REMOVED", p)
		case !or && ur && jhasDefault(up[k]):
			add("REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED", p)
		case !or && ur:
			add("REQUIRED_ATTRIBUTE_ADDED", p)
		}
	}
	keys := sortedKeys(op)
	for _, k := range sortedKeys(up) {
		if _, ok := op[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		p := path + "/properties/" + k
		ov, oHas := op[k]
		uv, uHas := up[k]
		switch {
		case !uHas && jopen(um):
			add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", p)
		case !uHas:
			if s, ok := jpartial(um, k); ok {
				sub := d.compare(jnode{ov, o.base, o.doc}, jnode{s, u.base, u.doc}, p)
				out = append(out, sub...)
				if jsonCompatibleAll(sub) {
					add("PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", p)
				} else {
					add("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", p)
				}
			} else if ov == false {
				add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", p)
			} else {
				add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", p)
			}
		case !oHas && jopen(om):
			switch {
			case jkind(uv) == "empty" && !jrequired(um, k):
				add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", p)
			case jrequired(um, k) && jhasDefault(uv):
				add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL", p)
			case jrequired(um, k):
				add("REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", p)
			default:
				add("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", p)
			}
		case !oHas:
			if s, ok := jpartial(om, k); ok {
				sub := d.compare(jnode{s, o.base, o.doc}, jnode{uv, u.base, u.doc}, p)
				out = append(out, sub...)
				if jsonCompatibleAll(sub) {
					add("PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", p)
				} else {
					add("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", p)
				}
			}
			switch {
			case jrequired(um, k) && jhasDefault(uv):
				add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL", p)
			case jrequired(um, k):
				add("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", p)
			default:
				add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", p)
			}
		default:
			out = append(out, d.compare(jnode{ov, o.base, o.doc}, jnode{uv, u.base, u.doc}, p)...)
		}
	}
	p := path + "/additionalProperties"
	oap, oSchema := om["additionalProperties"].(map[string]any)
	uap, uSchema := um["additionalProperties"].(map[string]any)
	switch oPermits, uPermits := om["additionalProperties"] != false, um["additionalProperties"] != false; {
	case oPermits != uPermits && uPermits:
		add("ADDITIONAL_PROPERTIES_ADDED", p)
	case oPermits != uPermits:
		add("ADDITIONAL_PROPERTIES_REMOVED", p)
	case !oSchema && uSchema:
		add("ADDITIONAL_PROPERTIES_NARROWED", p)
	case oSchema && !uSchema:
		add("ADDITIONAL_PROPERTIES_EXTENDED", p)
	case oSchema && uSchema:
		out = append(out, d.compare(jnode{oap, o.base, o.doc}, jnode{uap, u.base, u.doc}, p)...)
	}
	out = append(out, jbound(om, um, "maxProperties", path)...)
	out = append(out, jbound(om, um, "minProperties", path)...)
	return out
}

func (d *jsonDiff) array(o, u jnode, om, um map[string]any, path string) []jsonDifference {
	var out []jsonDifference
	add := func(kind, p string) { out = append(out, jsonDifference{kind, p}) }
	out = append(out, jbound(om, um, "maxItems", path)...)
	out = append(out, jbound(om, um, "minItems", path)...)
	if ou, uu := om["uniqueItems"] == true, um["uniqueItems"] == true; ou != uu {
		if uu {
			add("UNIQUE_ITEMS_ADDED", path+"/uniqueItems")
		} else {
			add("UNIQUE_ITEMS_REMOVED", path+"/uniqueItems")
		}
	}
	oi, oHas := om["items"]
	ui, uHas := um["items"]
	_, oTuple := oi.([]any)
	_, uTuple := ui.([]any)
	p := path + "/items"
	switch {
	case oTuple || uTuple:
		if !reflect.DeepEqual(oi, ui) {
			ot, _ := oi.([]any)
			ut, _ := ui.([]any)
			for i := range max(len(ot), len(ut)) {
				ip := fmt.Sprintf("%s/%d", p, i)
				switch {
				case i >= len(ut):
					add("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", ip)
				case i >= len(ot):
					add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL", ip)
				default:
					out = append(out, d.compare(jnode{ot[i], o.base, o.doc}, jnode{ut[i], u.base, u.doc}, ip)...)
				}
			}
		}
	case !oHas && !uHas:
	case !oHas:
		out = append(out, d.compare(jnode{true, o.base, o.doc}, jnode{ui, u.base, u.doc}, p)...)
	case !uHas:
		out = append(out, d.compare(jnode{oi, o.base, o.doc}, jnode{true, u.base, u.doc}, p)...)
	default:
		out = append(out, d.compare(jnode{oi, o.base, o.doc}, jnode{ui, u.base, u.doc}, p)...)
	}
	return out
}

// combined compares two oneOf/anyOf/allOf schemas: each original branch
// must match an update branch compatibly; a sum type (oneOf, anyOf) may
// gain branches, a product type (allOf) lose them.
func (d *jsonDiff) combined(o, u jnode, path string) []jsonDifference {
	oc, ob := o.branches()
	uc, ub := u.branches()
	if oc != uc && !(oc == "oneOf" && uc == "anyOf") {
		return []jsonDifference{{"COMBINED_TYPE_CHANGED", path}}
	}
	var out []jsonDifference
	used := make([]bool, len(ub))
	matched := 0
	for i, b := range ob {
		for j, c := range ub {
			if used[j] {
				continue
			}
			if sub := d.compare(b, c, fmt.Sprintf("%s/%s/%d", path, uc, i)); jsonCompatibleAll(sub) {
				used[j] = true
				matched++
				out = append(out, sub...)
				break
			}
		}
	}
	switch {
	case oc != uc:
		out = append(out, jsonDifference{"COMBINED_TYPE_EXTENDED", path})
	case oc == "allOf" && matched == len(ub) && len(ub) < len(ob):
		out = append(out, jsonDifference{"PRODUCT_TYPE_NARROWED", path})
	case oc == "allOf" && (matched < len(ob) || matched < len(ub)):
		out = append(out, jsonDifference{"PRODUCT_TYPE_EXTENDED", path})
	case oc != "allOf" && matched == len(ob) && len(ub) > len(ob):
		out = append(out, jsonDifference{"SUM_TYPE_EXTENDED", path})
	case oc != "allOf" && matched < len(ob):
		out = append(out, jsonDifference{"SUM_TYPE_NARROWED", path})
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
