package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

type jsonFormat struct{}

type jsonSchema struct {
	doc  any            // the schema, decoded
	refs map[string]any // its references' documents, by resolved URL
	norm string
}

func (s *jsonSchema) identity() string   { return s.norm }
func (s *jsonSchema) normalized() string { return s.norm }

// jsonBase is where a schema is compiled from, and its references by
// name relative to it. Nothing is ever fetched from it.
var jsonBase, _ = url.Parse("https://schema-registry.invalid/schema.json")

type jsonNoLoader struct{}

func (jsonNoLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("%s is neither part of the schema nor one of its references", u)
}

// parse compiles the schema with santhosh-tekuri/jsonschema, which checks
// it against its draft's metaschema (draft 7 unless $schema says another,
// as Confluent's default), its references added by name; a $ref to
// anything else is refused, never fetched.
func (jsonFormat) parse(src source) (parsed, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(jsonNoLoader{})
	refs := map[string]any{}
	if err := jsonRefs(c, src.refs, refs, 0); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src.text))
	if err != nil {
		return nil, err
	}
	if err := c.AddResource(jsonBase.String(), doc); err != nil {
		return nil, err
	}
	if _, err := c.Compile(jsonBase.String()); err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), jsonBase.String(), "schema"))
	}
	norm, err := json.Marshal(doc) // sorted keys, no whitespace
	if err != nil {
		return nil, err
	}
	return &jsonSchema{doc: doc, refs: refs, norm: string(norm)}, nil
}

func jsonRefs(c *jsonschema.Compiler, refs []namedSource, docs map[string]any, depth int) error {
	if depth > 32 {
		return errors.New("references nested more than 32 deep")
	}
	for _, r := range refs {
		u, err := url.Parse(r.name)
		if err != nil {
			return fmt.Errorf("reference %q: %w", r.name, err)
		}
		loc := jsonBase.ResolveReference(u).String()
		if _, ok := docs[loc]; ok {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.text))
		if err != nil {
			return fmt.Errorf("reference %q: %w", r.name, err)
		}
		if err := c.AddResource(loc, doc); err != nil {
			return fmt.Errorf("reference %q: %w", r.name, err)
		}
		docs[loc] = doc
		if err := jsonRefs(c, r.refs, docs, depth+1); err != nil {
			return err
		}
	}
	return nil
}
