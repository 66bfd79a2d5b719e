package serde

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/brain4it/kafkabpl/internal/pbdesc"
	"github.com/bufbuild/protocompile"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// The Protobuf serde's schemas. A schema, and each of its references,
// comes either as .proto text or as a base64 serialized
// FileDescriptorProto (as Confluent's Python client registers them, and as
// a registry answers ?format=serialized); github.com/bufbuild/protocompile
// compiles either. Values go through dynamicpb messages (protobuf.go).
//
// What kafkabpl registers is the serialized form, as confluent-kafka's
// serializer registers it: Confluent's deserializers (Python's, Go's,
// .NET's) ask the registry for ?format=serialized and read the answer as
// base64, so a registry that answers with the schema as it was
// registered still serves them; Java's reads either form.
//
// The serializer writes one message of the file, the first unless the
// config names another (value-schema-full-name), with its indexes in
// Confluent's header; the deserializer reads the message a record's
// indexes name, into the reader schema's message of the same full name
// when there is a reader schema (else into its first, or the one the
// config names), as Confluent's Python deserializer does.

var protobufFormat = &schemaFormat{name: "Protobuf", typ: sr.TypeProtobuf, compile: compileProtobuf}

// protoMainFile is the name the schema itself is compiled, and
// registered, under.
const protoMainFile = "kafkabpl-schema.proto"

type protobufCodec struct {
	file protoreflect.FileDescriptor
	msg  protoreflect.MessageDescriptor // what the serializer writes
	idx  []int                          // msg's indexes
	text string
	// into is the reader schema's codec, nil to read records with the
	// message their indexes name; byName finds into's messages.
	into   *protobufCodec
	byName map[protoreflect.FullName]protoreflect.MessageDescriptor
}

func compileProtobuf(ctx context.Context, reg *Registry, s sr.Schema) (schemaCodec, error) {
	files := map[string]string{protoMainFile: s.Schema}
	if err := protoReferences(ctx, reg, s.References, files, 0); err != nil {
		return nil, err
	}
	return compileProtoFiles(ctx, files)
}

// compileProtoFiles compiles files[protoMainFile], whose imports are the
// other files or standard ones.
func compileProtoFiles(ctx context.Context, files map[string]string) (*protobufCodec, error) {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(protoResolver(files))}
	fds, err := c.Compile(ctx, protoMainFile)
	if err != nil {
		return nil, err
	}
	fd := fds[0]
	first := pbDeclared(fd.Messages(), 0)
	if first == nil {
		return nil, errors.New("the schema has no message")
	}
	return &protobufCodec{file: fd, msg: first, idx: []int{0}, text: files[protoMainFile]}, nil
}

// protoResolver finds the files of a schema by import name, each as
// .proto text or as a serialized FileDescriptorProto.
func protoResolver(files map[string]string) protocompile.Resolver {
	return protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
		text, ok := files[path]
		if !ok {
			return protocompile.SearchResult{}, fmt.Errorf("%s: %w", path, errNoFile)
		}
		fdp, err := protoDescriptor(text)
		switch {
		case err != nil:
			return protocompile.SearchResult{}, fmt.Errorf("%s: %w", path, err)
		case fdp == nil:
			return protocompile.SearchResult{Source: strings.NewReader(text)}, nil
		}
		// The name the importers know it by, whatever it was registered
		// as (confluent-kafka's are its own file's name).
		fdp.Name = proto.String(path)
		pbdesc.FillJSONNames(fdp)
		return protocompile.SearchResult{Proto: fdp}, nil
	})
}

var errNoFile = errors.New("no such file: neither a reference of the schema nor a standard import")

// protoDescriptor reads text as a base64 FileDescriptorProto: nil (and no
// error) when text is not base64, so .proto text; an error when it is
// base64 but not a FileDescriptorProto. No .proto text that declares
// anything is base64: it has a space, a ';' or a '{'.
func protoDescriptor(text string) (*descriptorpb.FileDescriptorProto, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(text)
	if err != nil {
		if raw, err = base64.RawStdEncoding.Strict().DecodeString(text); err != nil {
			return nil, nil
		}
	}
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(raw, &fdp); err != nil {
		return nil, fmt.Errorf("neither .proto text nor a base64 serialized FileDescriptorProto: %w", err)
	}
	return &fdp, nil
}

// protoReferences fetches references (and theirs) into files, by import
// name.
func protoReferences(ctx context.Context, reg *Registry, refs []sr.SchemaReference, files map[string]string, depth int) error {
	if depth > 32 {
		return errors.New("references nested more than 32 deep")
	}
	for _, ref := range refs {
		if _, ok := files[ref.Name]; ok {
			continue
		}
		if reg == nil {
			return fmt.Errorf("reference %q needs a schema registry", ref.Name)
		}
		rs, err := reg.reference(ctx, ref)
		if err != nil {
			return err
		}
		files[ref.Name] = rs.Schema
		if err := protoReferences(ctx, reg, rs.References, files, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// registered is the schema as kafkabpl registers it: the file as a base64
// serialized FileDescriptorProto, as confluent-kafka registers its own.
func (c *protobufCodec) registered() string {
	fdp := protodesc.ToFileDescriptorProto(c.file)
	fdp.Name = proto.String(protoMainFile)
	fdp.SourceCodeInfo = nil
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
	if err != nil { // cannot happen: a compiled file's descriptor marshals
		return c.text
	}
	return base64.StdEncoding.EncodeToString(b)
}

func (c *protobufCodec) fullName() string  { return string(c.msg.FullName()) }
func (c *protobufCodec) index() []int      { return c.idx }
func (c *protobufCodec) canonical() string { return c.text }

// withMessage is c writing the message of the given full name (a nested
// one too, "iot.Reading.Where"). The error lists the file's messages.
func (c *protobufCodec) withMessage(name string) (*protobufCodec, error) {
	var all []string
	var found *protobufCodec
	var walk func(msgs protoreflect.MessageDescriptors, idx []int)
	walk = func(msgs protoreflect.MessageDescriptors, idx []int) {
		n := 0
		for i := range msgs.Len() {
			m := msgs.Get(i)
			if m.IsMapEntry() {
				continue
			}
			mi := append(idx[:len(idx):len(idx)], n)
			n++
			all = append(all, string(m.FullName()))
			if string(m.FullName()) == name && found == nil {
				found = &protobufCodec{file: c.file, msg: m, idx: mi, text: c.text}
			}
			walk(m.Messages(), mi)
		}
	}
	walk(c.file.Messages(), nil)
	if found == nil {
		more := ""
		if len(all) > 20 {
			all, more = all[:20], fmt.Sprintf(" and %d more", len(all)-20)
		}
		return nil, fmt.Errorf("the schema has no message %q; it has %s%s", name, strings.Join(all, ", "), more)
	}
	return found, nil
}

// resolve reads the writer's records into reader's messages: the one of
// the same full name, else the reader's own (its first, or the one the
// config names). Protobuf needs no more: fields match by number, and a
// field the reader lacks is dropped.
func (c *protobufCodec) resolve(reader schemaCodec) (schemaCodec, error) {
	r, ok := reader.(*protobufCodec)
	if !ok {
		return nil, fmt.Errorf("the reader schema is not a Protobuf schema")
	}
	byName := map[protoreflect.FullName]protoreflect.MessageDescriptor{}
	var walk func(msgs protoreflect.MessageDescriptors)
	walk = func(msgs protoreflect.MessageDescriptors) {
		for i := range msgs.Len() {
			m := msgs.Get(i)
			byName[m.FullName()] = m
			walk(m.Messages())
		}
	}
	walk(r.file.Messages())
	return &protobufCodec{file: c.file, msg: c.msg, idx: c.idx, text: c.text, into: r, byName: byName}, nil
}

// readAs is the message a record of the writer's message md is read
// into.
func (c *protobufCodec) readAs(md protoreflect.MessageDescriptor) protoreflect.MessageDescriptor {
	if c.into == nil {
		return md
	}
	if m, ok := c.byName[md.FullName()]; ok {
		return m
	}
	return c.into.msg
}
