package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// avroCanonical writes an Avro schema in the form Confluent's registry
// stores and returns when it does not normalize: what Java's Avro
// Schema.toString gives of the parsed schema, references known
// (AvroSchema.canonicalString). So {"type": "string"} is "string"; a
// named type is {"type", "name", "namespace" (when it differs from the
// enclosing one), "doc", then "fields" / "symbols" and "default" /
// "size", its other properties in the order written, "aliases"}; a field
// is {"name", "type", "doc", "default", "order" (unless ascending),
// "aliases", its other properties}; a named type met again, or defined
// by a reference (named: the full names they define), is its name,
// short when it is in the enclosing namespace; no whitespace. Unlike the
// normalized form it keeps the properties' order and short names.
func avroCanonical(text string, named map[string]bool) (string, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	v, err := readOrdered(d)
	if err != nil {
		return "", err
	}
	c := avroCanonicalizer{defined: map[string]bool{}}
	for k := range named {
		c.defined[k] = true
	}
	c.schema(v, "")
	return c.b.String(), nil
}

// ordered is a JSON object with its keys in the order written.
type ordered struct {
	keys []string
	vals map[string]any
}

func (o *ordered) get(k string) (any, bool) { v, ok := o.vals[k]; return v, ok }

func (o *ordered) str(k string) (string, bool) { s, ok := o.vals[k].(string); return s, ok }

// readOrdered reads one JSON value: objects as *ordered, arrays as []any,
// numbers as json.Number.
func readOrdered(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &ordered{vals: map[string]any{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := readOrdered(d)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := d.Token()
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := readOrdered(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
		return nil, errors.New("unexpected " + t.String())
	}
	return tok, nil
}

type avroCanonicalizer struct {
	b       bytes.Buffer
	defined map[string]bool // full names written, or defined by references
}

// reserved are the keys Java's Avro reads as a schema's own, not as its
// properties (its SCHEMA_RESERVED; an enum's ENUM_RESERVED adds default).
var avroReserved = []string{"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"}

// fieldReserved are a field's own keys (Java's FIELD_RESERVED).
var avroFieldReserved = []string{"default", "doc", "name", "order", "type", "aliases"}

func (c *avroCanonicalizer) str(s string) {
	e := json.NewEncoder(&c.b)
	e.SetEscapeHTML(false)
	e.Encode(s)
	c.b.Truncate(c.b.Len() - 1) // Encode's newline
}

// value writes a JSON value as it was written, keys in their order.
func (c *avroCanonicalizer) value(v any) {
	switch v := v.(type) {
	case *ordered:
		c.b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				c.b.WriteByte(',')
			}
			c.str(k)
			c.b.WriteByte(':')
			c.value(v.vals[k])
		}
		c.b.WriteByte('}')
	case []any:
		writeList(&c.b, '[', ']', v, c.value)
	case string:
		c.str(v)
	case json.Number:
		c.b.WriteString(v.String())
	case nil:
		c.b.WriteString("null")
	case bool:
		if v {
			c.b.WriteString("true")
		} else {
			c.b.WriteString("false")
		}
	}
}

// field writes ,"key":value.
func (c *avroCanonicalizer) field(k string, v any) {
	c.b.WriteByte(',')
	c.str(k)
	c.b.WriteByte(':')
	c.value(v)
}

// props writes o's properties: its keys not in reserved, in order.
func (c *avroCanonicalizer) props(o *ordered, reserved []string) {
	for _, k := range o.keys {
		if !slices.Contains(reserved, k) {
			c.field(k, o.vals[k])
		}
	}
}

// qualified is full's name as written in namespace ns: short when full
// is in ns (Java's Name.getQualified).
func qualified(full, ns string) string {
	if i := strings.LastIndexByte(full, '.'); i >= 0 && full[:i] == ns {
		return full[i+1:]
	}
	return full
}

// resolve is the full name a reference to name means in namespace ns:
// ns's name when that is defined, else name as written.
func (c *avroCanonicalizer) resolve(name, ns string) string {
	if full := avroFull(name, ns); c.defined[full] {
		return full
	}
	return name
}

func (c *avroCanonicalizer) schema(v any, ns string) {
	switch s := v.(type) {
	case string:
		if avroPrimitives[s] {
			c.str(s)
		} else {
			c.str(qualified(c.resolve(s, ns), ns))
		}
	case []any:
		writeList(&c.b, '[', ']', s, func(b any) { c.schema(b, ns) })
	case *ordered:
		c.object(s, ns)
	default:
		c.value(s)
	}
}

func (c *avroCanonicalizer) object(o *ordered, ns string) {
	t, ok := o.str("type")
	if !ok { // {"type": {...}} or {"type": [...]}
		inner, _ := o.get("type")
		c.schema(inner, ns)
		return
	}
	switch t {
	case "record", "error", "enum", "fixed":
		name, _ := o.str("name")
		space := ns
		if s, ok := o.str("namespace"); ok && !strings.Contains(name, ".") {
			space = s
		}
		full := avroFull(name, space)
		short, own := full, ""
		if i := strings.LastIndexByte(full, '.'); i >= 0 {
			short, own = full[i+1:], full[:i]
		}
		if c.defined[full] {
			c.str(qualified(full, ns))
			return
		}
		c.defined[full] = true
		c.b.WriteString(`{"type":`)
		c.str(t)
		c.b.WriteString(`,"name":`)
		c.str(short)
		switch {
		case own != "" && own != ns:
			c.field("namespace", own)
		case own == "" && ns != "":
			c.field("namespace", "")
		}
		if d, ok := o.str("doc"); ok {
			c.field("doc", d)
		}
		reserved := avroReserved
		switch t {
		case "enum":
			syms, _ := o.get("symbols")
			c.field("symbols", syms)
			if d, ok := o.get("default"); ok {
				c.field("default", d)
			}
			reserved = append(slices.Clone(avroReserved), "default")
		case "fixed":
			size, _ := o.get("size")
			c.field("size", size)
		default:
			c.b.WriteString(`,"fields":`)
			fields, _ := o.get("fields")
			fs, _ := fields.([]any)
			writeList(&c.b, '[', ']', fs, func(f any) { c.recordField(f, own) })
		}
		c.props(o, reserved)
		if as, ok := o.get("aliases"); ok {
			if list, _ := as.([]any); len(list) > 0 {
				c.b.WriteString(`,"aliases":`)
				writeList(&c.b, '[', ']', list, func(a any) {
					s, _ := a.(string)
					c.str(qualified(avroFull(s, own), own))
				})
			}
		}
		c.b.WriteByte('}')
	case "array", "map":
		key := "items"
		if t == "map" {
			key = "values"
		}
		c.b.WriteString(`{"type":`)
		c.str(t)
		c.b.WriteString(`,"` + key + `":`)
		inner, _ := o.get(key)
		c.schema(inner, ns)
		c.props(o, avroReserved)
		c.b.WriteByte('}')
	default:
		hasProps := slices.ContainsFunc(o.keys, func(k string) bool { return !slices.Contains(avroReserved, k) })
		if !hasProps || !avroPrimitives[t] {
			// A primitive without properties is its name; {"type": "Name"}
			// a reference to a named type.
			c.schema(t, ns)
			return
		}
		c.b.WriteString(`{"type":`)
		c.str(t)
		c.props(o, avroReserved)
		c.b.WriteByte('}')
	}
}

// recordField writes a record's field; ns is the record's namespace.
func (c *avroCanonicalizer) recordField(v any, ns string) {
	f, ok := v.(*ordered)
	if !ok {
		c.value(v)
		return
	}
	c.b.WriteString(`{"name":`)
	name, _ := f.get("name")
	c.value(name)
	c.b.WriteString(`,"type":`)
	t, _ := f.get("type")
	c.schema(t, ns)
	if d, ok := f.str("doc"); ok {
		c.field("doc", d)
	}
	if d, ok := f.get("default"); ok {
		c.field("default", d)
	}
	if o, ok := f.str("order"); ok && strings.ToLower(o) != "ascending" {
		c.field("order", strings.ToLower(o))
	}
	if as, ok := f.get("aliases"); ok {
		if list, _ := as.([]any); len(list) > 0 {
			c.field("aliases", list)
		}
	}
	c.props(f, avroFieldReserved)
	c.b.WriteByte('}')
}
