package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/avro"
)

type avroFormat struct{}

type avroSchema struct {
	schema *avro.Schema
	norm   string
	canon  string // as Confluent stores it without normalize (avroCanonical)
}

func (s *avroSchema) identity() string   { return s.norm }
func (s *avroSchema) normalized() string { return s.norm }
func (s *avroSchema) canonical() string  { return s.canon }

// parse compiles the schema with its references' named types (a
// reference's own references first), which twmb/avro checks as Java's
// Avro does: unknown types, records without fields, unresolved names,
// defaults that do not fit their type.
func (avroFormat) parse(src source) (parsed, error) {
	var cache avro.SchemaCache
	named := map[string]bool{}
	if err := avroRefs(&cache, src.refs, named, 0); err != nil {
		return nil, err
	}
	sch, err := cache.Parse(src.text)
	if err != nil {
		return nil, err
	}
	norm, err := avroNormalize(src.text, named)
	if err != nil {
		return nil, err
	}
	canon, err := avroCanonical(src.text, named)
	if err != nil {
		return nil, err
	}
	return &avroSchema{schema: sch, norm: norm, canon: canon}, nil
}

func avroRefs(cache *avro.SchemaCache, refs []namedSource, named map[string]bool, depth int) error {
	if depth > 32 {
		return errors.New("references nested more than 32 deep")
	}
	for _, r := range refs {
		if err := avroRefs(cache, r.refs, named, depth+1); err != nil {
			return err
		}
		if _, err := cache.Parse(r.text); err != nil {
			return fmt.Errorf("reference %q: %w", r.name, err)
		}
		var v any
		if json.Unmarshal([]byte(r.text), &v) == nil {
			n := avroNormalizer{defined: named}
			n.schema(v, "")
		}
	}
	return nil
}

// canRead uses twmb/avro's schema resolution check, the rules of the Avro
// specification that Java's SchemaCompatibility implements.
func (avroFormat) canRead(reader, writer parsed) []string {
	err := avro.CheckCompatibility(writer.(*avroSchema).schema, reader.(*avroSchema).schema)
	if err == nil {
		return nil
	}
	var ce *avro.CompatibilityError
	if !errors.As(err, &ce) {
		return []string{fmt.Sprintf(`{errorType:"UNKNOWN", description:%q}`, err.Error())}
	}
	return []string{fmt.Sprintf(`{errorType:%q, description:"The {reader} schema's type %s at path '/%s' cannot read the {writer} schema's %s: %s"}`,
		avroErrorType(ce.Detail), ce.ReaderType, ce.Path, ce.WriterType, ce.Detail)}
}

// avroErrorType names an incompatibility as Java's Avro does.
func avroErrorType(detail string) string {
	switch d := strings.ToLower(detail); {
	case strings.Contains(d, "default"):
		return "READER_FIELD_MISSING_DEFAULT_VALUE"
	case strings.Contains(d, "symbol"):
		return "MISSING_ENUM_SYMBOLS"
	case strings.Contains(d, "size"):
		return "FIXED_SIZE_MISMATCH"
	case strings.Contains(d, "name"):
		return "NAME_MISMATCH"
	case strings.Contains(d, "union"):
		return "MISSING_UNION_BRANCH"
	}
	return "TYPE_MISMATCH"
}

// avroNormalize writes a schema in the normalized form Confluent's
// normalize=true stores: named types by full name, each defined once,
// "name" then "type" then the type's own attributes, then logical type,
// doc, aliases (sorted), default and other properties (sorted), with no
// whitespace. named holds the full names its references define.
func avroNormalize(text string, named map[string]bool) (string, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	defined := map[string]bool{}
	for k := range named {
		defined[k] = true
	}
	n := avroNormalizer{defined: defined}
	n.schema(v, "")
	return n.b.String(), nil
}

// writeList writes each of items with write, separated by commas,
// between open and close.
func writeList(b *bytes.Buffer, open, close byte, items []any, write func(any)) {
	b.WriteByte(open)
	for i, item := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		write(item)
	}
	b.WriteByte(close)
}

type avroNormalizer struct {
	b       bytes.Buffer
	defined map[string]bool
}

var avroPrimitives = map[string]bool{"null": true, "boolean": true, "int": true, "long": true, "float": true, "double": true, "bytes": true, "string": true}

func avroFull(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

// ref resolves a reference to a named type: in the enclosing namespace
// first, then as written.
func (n *avroNormalizer) ref(name, ns string) string {
	if full := avroFull(name, ns); n.defined[full] {
		return full
	}
	return name
}

func (n *avroNormalizer) str(s string) {
	b, _ := json.Marshal(s)
	n.b.Write(b)
}

func (n *avroNormalizer) value(v any) {
	b, _ := json.Marshal(v) // sorted keys
	n.b.Write(b)
}

// props writes the properties of m not in skip, sorted.
func (n *avroNormalizer) props(m map[string]any, skip ...string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !slices.Contains(skip, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		n.b.WriteByte(',')
		n.str(k)
		n.b.WriteByte(':')
		n.value(m[k])
	}
}

func (n *avroNormalizer) schema(v any, ns string) {
	switch s := v.(type) {
	case string:
		if avroPrimitives[s] {
			n.str(s)
		} else {
			n.str(n.ref(s, ns))
		}
	case []any:
		writeList(&n.b, '[', ']', s, func(b any) { n.schema(b, ns) })
	case map[string]any:
		n.object(s, ns)
	default:
		n.value(s)
	}
}

func (n *avroNormalizer) object(m map[string]any, ns string) {
	t, _ := m["type"].(string)
	if _, ok := m["type"].(string); !ok { // {"type": {...}} or {"type": [...]}
		n.schema(m["type"], ns)
		return
	}
	switch t {
	case "record", "error", "enum", "fixed":
		name, _ := m["name"].(string)
		if s, ok := m["namespace"].(string); ok && !strings.Contains(name, ".") {
			ns = s
		}
		full := avroFull(name, ns)
		if i := strings.LastIndexByte(full, '.'); i >= 0 {
			ns = full[:i]
		} else {
			ns = ""
		}
		if n.defined[full] && n.b.Len() > 0 {
			n.str(full)
			return
		}
		n.defined[full] = true
		n.b.WriteString(`{"name":`)
		n.str(full)
		n.b.WriteString(`,"type":`)
		n.str(t)
		switch t {
		case "enum":
			n.b.WriteString(`,"symbols":`)
			n.value(m["symbols"])
		case "fixed":
			n.b.WriteString(`,"size":`)
			n.value(m["size"])
		default:
			n.b.WriteString(`,"fields":`)
			fields, _ := m["fields"].([]any)
			writeList(&n.b, '[', ']', fields, func(f any) { n.field(f, ns) })
		}
		n.logical(m)
		n.complexProps(m)
		n.props(m, "name", "namespace", "type", "symbols", "size", "fields", "logicalType", "precision", "scale", "doc", "aliases", "default")
		n.b.WriteByte('}')
	case "array", "map":
		n.b.WriteString(`{"type":`)
		n.str(t)
		key := "items"
		if t == "map" {
			key = "values"
		}
		n.b.WriteString(`,"` + key + `":`)
		n.schema(m[key], ns)
		n.logical(m)
		n.props(m, "type", key, "logicalType", "precision", "scale")
		n.b.WriteByte('}')
	default:
		if len(m) == 1 {
			n.schema(t, ns)
			return
		}
		n.b.WriteString(`{"type":`)
		n.str(n.primitiveOrRef(t, ns))
		n.logical(m)
		n.props(m, "type", "logicalType", "precision", "scale")
		n.b.WriteByte('}')
	}
}

func (n *avroNormalizer) primitiveOrRef(t, ns string) string {
	if avroPrimitives[t] {
		return t
	}
	return n.ref(t, ns)
}

func (n *avroNormalizer) logical(m map[string]any) {
	lt, ok := m["logicalType"].(string)
	if !ok {
		return
	}
	n.b.WriteString(`,"logicalType":`)
	n.str(lt)
	if lt == "decimal" {
		if p, ok := m["precision"]; ok {
			n.b.WriteString(`,"precision":`)
			n.value(p)
		}
		if s, ok := m["scale"]; ok && fmt.Sprint(s) != "0" {
			n.b.WriteString(`,"scale":`)
			n.value(s)
		}
	}
}

func (n *avroNormalizer) complexProps(m map[string]any) {
	if d, ok := m["doc"].(string); ok && d != "" {
		n.b.WriteString(`,"doc":`)
		n.str(d)
	}
	n.aliases(m)
	if d, ok := m["default"]; ok {
		n.b.WriteString(`,"default":`)
		n.value(d)
	}
}

func (n *avroNormalizer) aliases(m map[string]any) {
	as, ok := m["aliases"].([]any)
	if !ok || len(as) == 0 {
		return
	}
	sorted := slices.Clone(as)
	slices.SortFunc(sorted, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	n.b.WriteString(`,"aliases":`)
	n.value(sorted)
}

func (n *avroNormalizer) field(v any, ns string) {
	f, ok := v.(map[string]any)
	if !ok {
		n.value(v)
		return
	}
	n.b.WriteString(`{"name":`)
	n.value(f["name"])
	n.b.WriteString(`,"type":`)
	n.schema(f["type"], ns)
	if o, ok := f["order"].(string); ok && o != "ascending" {
		n.b.WriteString(`,"order":`)
		n.str(o)
	}
	if d, ok := f["doc"]; ok {
		n.b.WriteString(`,"doc":`)
		n.value(d)
	}
	n.aliases(f)
	if d, ok := f["default"]; ok {
		n.b.WriteString(`,"default":`)
		n.value(d)
	}
	n.props(f, "name", "type", "order", "doc", "aliases", "default")
	n.b.WriteByte('}')
}
