package registry

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/brain4it/kafkabpl/internal/pbdesc"
	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	_ "google.golang.org/protobuf/types/known/anypb" // the well-known files a descriptor may import
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)

type protobufFormat struct{}

type protobufSchema struct {
	file protoreflect.FileDescriptor
	text string
	id   string // the file's descriptor, deterministic and without source info
}

func (s *protobufSchema) identity() string   { return s.id }
func (s *protobufSchema) normalized() string { return s.text }

// protoMain is the name the schema itself is compiled under.
const protoMain = "schema-registry-main.proto"

// parse compiles .proto text (or a base64 FileDescriptorProto, as
// Confluent's clients may register) with its references as its imports,
// by import name; Google's well-known imports are built in.
func (protobufFormat) parse(src source) (parsed, error) {
	files := map[string]string{}
	if err := protoRefs(src.refs, files, 0); err != nil {
		return nil, err
	}
	files[protoMain] = src.text
	if fdp := protoDescriptor(src.text); fdp != nil && len(src.refs) == 0 {
		// A descriptor that imports only Google's well-known files, as
		// Confluent's Python client registers them, is linked directly.
		if fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles); err == nil {
			return protoParsed(fd, src.text)
		}
	}
	resolver := protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
		text, ok := files[path]
		if !ok {
			return protocompile.SearchResult{}, fmt.Errorf("import %q is not one of the schema's references", path)
		}
		if fdp := protoDescriptor(text); fdp != nil {
			fdp.Name = proto.String(path)
			return protocompile.SearchResult{Proto: fdp}, nil
		}
		return protocompile.SearchResult{Source: strings.NewReader(text)}, nil
	})
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(resolver)}
	fds, err := c.Compile(context.Background(), protoMain)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), protoMain+":"))
	}
	return protoParsed(fds[0], src.text)
}

func protoParsed(fd protoreflect.FileDescriptor, text string) (parsed, error) {
	fdp := protodesc.ToFileDescriptorProto(fd)
	fdp.SourceCodeInfo = nil
	fdp.Name = proto.String(protoMain)
	id, err := proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
	if err != nil {
		return nil, err
	}
	return &protobufSchema{file: fd, text: text, id: string(id)}, nil
}

func protoRefs(refs []namedSource, files map[string]string, depth int) error {
	if depth > 32 {
		return errors.New("references nested more than 32 deep")
	}
	for _, r := range refs {
		if _, ok := files[r.name]; ok {
			continue
		}
		files[r.name] = r.text
		if err := protoRefs(r.refs, files, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// protoDescriptor reads a base64 FileDescriptorProto; nil when text is not
// one.
func protoDescriptor(text string) *descriptorpb.FileDescriptorProto {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(raw) == 0 {
		return nil
	}
	var fdp descriptorpb.FileDescriptorProto
	if proto.Unmarshal(raw, &fdp) != nil {
		return nil
	}
	pbdesc.FillJSONNames(&fdp)
	return &fdp
}

// serialized is the schema as ?format=serialized returns it: its
// FileDescriptorProto, base64.
func (s *protobufSchema) serialized(name string) string {
	fdp := protodesc.ToFileDescriptorProto(s.file)
	fdp.SourceCodeInfo = nil
	fdp.Name = proto.String(name)
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
	return base64.StdEncoding.EncodeToString(b)
}
