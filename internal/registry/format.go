package registry

import (
	"fmt"
	"strings"
)

// Schema types, as the API names them.
const (
	typeAvro     = "AVRO"
	typeProtobuf = "PROTOBUF"
	typeJSON     = "JSON"
)

// schemaTypes is what GET /schemas/types lists, in Confluent's order.
var schemaTypes = []string{typeJSON, typeProtobuf, typeAvro}

// Reference is a schema reference: the name a schema imports another by,
// and the subject and version it is registered under.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// source is a schema's text with its references resolved, recursively:
// what a format parses.
type source struct {
	text string
	refs []namedSource
}

type namedSource struct {
	name string
	source
}

// parsed is a schema a format has understood.
type parsed interface {
	// identity is the schema's canonical text: two schemas of a type
	// with the same identity (and references) are the same schema.
	identity() string
	// normalized is the schema's text as normalize=true stores it.
	normalized() string
}

// canonicaler is a parsed schema whose type Confluent's registry stores in
// a canonical form of its own when it does not normalize (Avro's
// Schema.toString); the others are stored as registered.
type canonicaler interface{ canonical() string }

// format parses one schema type and tells compatibility.
type format interface {
	parse(src source) (parsed, error)
	// canRead lists why data written with writer cannot be read with
	// reader; none: it can.
	canRead(reader, writer parsed) []string
}

func formatOf(typ string) (format, error) {
	switch typ {
	case typeAvro:
		return avroFormat{}, nil
	case typeProtobuf:
		return protobufFormat{}, nil
	case typeJSON:
		return jsonFormat{}, nil
	}
	return nil, fmt.Errorf("unknown schema type %q", typ)
}

// schemaType returns the API's name of a schemaType field: AVRO when
// empty, and the name upper-cased (JSON Schema is JSON).
func schemaType(s string) (string, error) {
	switch t := strings.ToUpper(s); t {
	case "":
		return typeAvro, nil
	case typeAvro, typeProtobuf, typeJSON:
		return t, nil
	}
	return "", fmt.Errorf("unknown schema type %q", s)
}
