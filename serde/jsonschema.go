package serde

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl/value"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/twmb/franz-go/pkg/sr"
)

// The JSON Schema serde: values are written as the JSON serializer writes
// them (lists with names are objects, in order; lists without, arrays)
// and checked against the schema with github.com/santhosh-tekuri/jsonschema
// before they are sent: a value that does not fit fails its record.
// Records are read as the JSON deserializer reads them, without checking
// them against the schema (as Confluent's deserializer does by default).

var jsonSchemaFormat = &schemaFormat{name: "JSON Schema", typ: sr.TypeJSON, compile: compileJSONSchema}

// jsonSchemaBase is where the schema is taken to be, so that a reference's
// relative name ("unit.json") resolves beside it; an absolute name stays.
var jsonSchemaBase = &url.URL{Scheme: "mem", Host: "schemas", Path: "/schema.json"}

type jsonSchemaCodec struct {
	schema *jsonschema.Schema
	text   string
	title  string
}

// noLoader refuses to load any schema from a URL: a $ref names either a
// part of the schema or one of its registry references, never something
// to fetch.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is neither part of the schema nor one of its references", url)
}

func compileJSONSchema(ctx context.Context, reg *Registry, s sr.Schema) (schemaCodec, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	for _, ref := range s.References {
		if reg == nil {
			return nil, fmt.Errorf("reference %q needs a schema registry", ref.Name)
		}
		rs, err := reg.reference(ctx, ref)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(rs.Schema))
		if err != nil {
			return nil, fmt.Errorf("reference %q: %w", ref.Name, err)
		}
		u, err := url.Parse(ref.Name)
		if err != nil {
			return nil, fmt.Errorf("reference %q: %w", ref.Name, err)
		}
		if err := c.AddResource(jsonSchemaBase.ResolveReference(u).String(), doc); err != nil {
			return nil, fmt.Errorf("reference %q: %w", ref.Name, err)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(s.Schema))
	if err != nil {
		return nil, err
	}
	loc := jsonSchemaBase.String()
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	jc := &jsonSchemaCodec{schema: sch, text: s.Schema}
	if m, ok := doc.(map[string]any); ok {
		jc.title, _ = m["title"].(string)
	}
	return jc, nil
}

func (c *jsonSchemaCodec) fullName() string { return c.title }
func (c *jsonSchemaCodec) index() []int     { return nil }
func (c *jsonSchemaCodec) canonical() string {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(c.text)) != nil {
		return c.text
	}
	return buf.String()
}

// resolve reads every writer's records the same way: JSON has no
// writer-dependent layout.
func (c *jsonSchemaCodec) resolve(schemaCodec) (schemaCodec, error) { return c, nil }

// appendEncode writes v as the JSON serializer does and checks it. BPL has
// one empty list, (), for JSON's [] and {}: where the schema refuses []
// for not being an object, the empty list there is written {} instead.
func (c *jsonSchemaCodec) appendEncode(dst []byte, v any) ([]byte, error) {
	var objects map[*value.List]bool
	for {
		b, err := encodeJSONObjects(v, objects)
		if err != nil {
			return nil, err
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		err = c.schema.Validate(inst)
		if err == nil {
			return append(dst, b...), nil
		}
		n := len(objects)
		if objects == nil {
			objects = map[*value.List]bool{}
		}
		emptyObjects(err, v, objects)
		if len(objects) == n { // nothing more to try
			return nil, jsonSchemaError(err)
		}
	}
}

// emptyObjects adds to objects the empty lists of v that the validation
// error err refuses as arrays where it wants an object.
func emptyObjects(err error, v any, objects map[*value.List]bool) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return
	}
	var walk func(ve *jsonschema.ValidationError)
	walk = func(ve *jsonschema.ValidationError) {
		for _, c := range ve.Causes {
			walk(c)
		}
		if k, ok := ve.ErrorKind.(*kind.Type); !ok || k.Got != "array" || !slices.Contains(k.Want, "object") {
			return
		}
		if l, ok := atLocation(v, ve.InstanceLocation).(*value.List); ok && l.Len() == 0 {
			objects[l] = true
		}
	}
	walk(ve)
}

// atLocation is the element of v at a JSON instance location: object
// members by name, array elements by index.
func atLocation(v any, loc []string) any {
	for _, seg := range loc {
		l, ok := v.(*value.List)
		if !ok {
			return nil
		}
		if l.Named() {
			if v, ok = l.Get(seg); !ok {
				return nil
			}
			continue
		}
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= l.Len() {
			return nil
		}
		v = l.At(i)
	}
	return v
}

func (c *jsonSchemaCodec) decode(b []byte) (any, error) {
	return decodeJSON(b)
}

// jsonSchemaError words a validation failure as the Avro codec words its
// own: the field's path, and what is wrong there (the first failure the
// validator found, at its deepest).
func jsonSchemaError(err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	msg := ve.Error()
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = msg[i+1:]
	}
	msg = strings.TrimPrefix(strings.TrimSpace(msg), "- ")
	if strings.HasPrefix(msg, "at '") {
		if i := strings.Index(msg, "': "); i >= 0 {
			msg = msg[i+3:]
		}
	}
	var path strings.Builder
	for _, seg := range ve.InstanceLocation {
		if isIndex(seg) {
			fmt.Fprintf(&path, "[%s]", seg)
			continue
		}
		if path.Len() > 0 {
			path.WriteByte('.')
		}
		path.WriteString(seg)
	}
	return &avroError{path: path.String(), msg: msg}
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
