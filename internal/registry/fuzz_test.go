package registry

import "testing"

// FuzzSchemas feeds pairs of schemas of each type to the parsers, the
// Avro normalizer and the compatibility checks: none panics, and an Avro
// schema's normalized form parses to the same schema.
func FuzzSchemas(f *testing.F) {
	f.Add(uint8(0), `{"type":"record","name":"A","namespace":"n","fields":[{"name":"x","type":"int","default":1}]}`, `{"type":"record","name":"A","namespace":"n","fields":[]}`)
	f.Add(uint8(0), `["null",{"type":"enum","name":"E","symbols":["A","B"]},{"type":"array","items":"E"}]`, `{"type":"map","values":{"type":"fixed","name":"F","size":4}}`)
	f.Add(uint8(1), `syntax = "proto3"; package p; message A { string x = 1; oneof o { int32 y = 2; } map<string, A> m = 3; }`, `syntax = "proto3"; package p; message A { bytes x = 1; int64 y = 2; }`)
	f.Add(uint8(2), `{"type":"object","properties":{"a":{"type":"string","maxLength":3}},"required":["a"],"additionalProperties":false}`, `{"oneOf":[{"type":"integer"},{"$ref":"#/definitions/d"}],"definitions":{"d":{"type":"array","items":{"enum":[1,2]}}}}`)
	f.Fuzz(func(t *testing.T, which uint8, a, b string) {
		typ := []string{typeAvro, typeProtobuf, typeJSON}[which%3]
		fm, _ := formatOf(typ)
		pa, errA := fm.parse(source{text: a})
		pb, errB := fm.parse(source{text: b})
		if errA != nil {
			return
		}
		if typ == typeAvro {
			again, err := fm.parse(source{text: pa.normalized()})
			if err != nil {
				t.Fatalf("normalized %s does not parse: %v", pa.normalized(), err)
			}
			if again.identity() != pa.identity() {
				t.Fatalf("normalized %s is not the same schema as %s", pa.normalized(), a)
			}
		}
		if errB == nil {
			fm.canRead(pa, pb)
			fm.canRead(pb, pa)
		}
	})
}
