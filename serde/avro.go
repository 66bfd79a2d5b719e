package serde

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/sr"
)

// The Avro serde: schemas are parsed, checked and resolved (writer against
// reader) by github.com/twmb/avro; BPL values are written and read by the
// codec below, which walks the parsed schema's tree and builds BPL values
// directly, with no Go maps in between. The mapping is in
// docs/registry.md.

var avroFormat = &schemaFormat{name: "Avro", typ: sr.TypeAvro, compile: compileAvro}

// avroKind is a node's Avro type.
type avroKind uint8

const (
	avNull avroKind = iota
	avBoolean
	avInt
	avLong
	avFloat
	avDouble
	avBytes
	avString
	avRecord
	avEnum
	avArray
	avMap
	avUnion
	avFixed
)

var avroKinds = map[string]avroKind{
	"null": avNull, "boolean": avBoolean, "int": avInt, "long": avLong, "float": avFloat,
	"double": avDouble, "bytes": avBytes, "string": avString, "record": avRecord, "error": avRecord,
	"enum": avEnum, "array": avArray, "map": avMap, "union": avUnion, "fixed": avFixed,
}

// avroLogical is the logical types the codec maps to BPL values of their
// own; others read as their underlying type.
type avroLogical uint8

const (
	lgNone avroLogical = iota
	lgDate
	lgDecimal
	lgUUID // on a string: its text must be a UUID's
)

type avroNode struct {
	kind     avroKind
	logical  avroLogical
	lt       string // the logical type as written
	name     string // full name of a record, enum or fixed
	fields   []avroField
	names    []string // the fields' names, in order
	items    *avroNode
	branches []*avroNode
	symbols  []string
	size     int
	scale    int
	limit    *big.Int // a decimal's: 10^precision, the first unscaled value too wide
}

type avroField struct {
	name       string
	node       *avroNode
	hasDefault bool
	def        any       // the default, as a BPL value
	defNode    *avroNode // the node the default is written with (a union's first branch)
}

// avroCodec is a parsed Avro schema and its compiled tree. resolved, when
// set, decodes data of this writer schema into a reader schema's layout.
type avroCodec struct {
	schema   *avro.Schema
	root     *avroNode
	resolved *avro.Schema
	reader   *avroNode
}

func compileAvro(ctx context.Context, reg *Registry, s sr.Schema) (schemaCodec, error) {
	var cache avro.SchemaCache
	for _, ref := range s.References {
		if reg == nil {
			return nil, fmt.Errorf("reference %q needs a schema registry", ref.Name)
		}
		rs, err := reg.reference(ctx, ref)
		if err != nil {
			return nil, err
		}
		if _, err := cache.Parse(rs.Schema); err != nil {
			return nil, fmt.Errorf("reference %q: %w", ref.Name, err)
		}
	}
	sch, err := cache.Parse(s.Schema)
	if err != nil {
		return nil, err
	}
	root, err := avroCompile(sch.Root(), "", map[string]*avroNode{})
	if err != nil {
		return nil, err
	}
	return &avroCodec{schema: sch, root: root}, nil
}

func avroFullName(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

// avroCompile turns twmb/avro's tree into the codec's; named types are
// kept in named by full name, so that references (and recursion) find
// them.
func avroCompile(sn *avro.SchemaNode, ns string, named map[string]*avroNode) (*avroNode, error) {
	kind, ok := avroKinds[sn.Type]
	if !ok { // a reference to a named type
		if n := named[sn.Type]; n != nil {
			return n, nil
		}
		if n := named[avroFullName(sn.Type, ns)]; n != nil {
			return n, nil
		}
		return nil, fmt.Errorf("unknown type %q", sn.Type)
	}
	n := &avroNode{kind: kind, lt: sn.LogicalType}
	switch sn.LogicalType {
	case "date":
		if kind == avInt {
			n.logical = lgDate
		}
	case "decimal":
		if kind == avBytes || kind == avFixed {
			n.logical, n.scale = lgDecimal, sn.Scale
			if sn.Precision > 0 {
				n.limit = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sn.Precision)), nil)
			}
		}
	case "uuid":
		if kind == avString {
			n.logical = lgUUID
		}
	}
	switch kind {
	case avRecord, avEnum, avFixed:
		if sn.Namespace != "" || strings.Contains(sn.Name, ".") {
			ns = sn.Namespace
		}
		n.name = avroFullName(sn.Name, ns)
		if i := strings.LastIndex(n.name, "."); i >= 0 {
			ns = n.name[:i]
		}
		named[n.name] = n
	}
	switch kind {
	case avRecord:
		for i := range sn.Fields {
			f := &sn.Fields[i]
			fn, err := avroCompile(&f.Type, ns, named)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			af := avroField{name: f.Name, node: fn, hasDefault: f.HasDefault, defNode: fn}
			if f.HasDefault {
				if fn.kind == avUnion {
					af.defNode = fn.branches[0]
				}
				af.def = avroDefault(f.Default)
			}
			n.fields = append(n.fields, af)
			n.names = append(n.names, f.Name)
		}
	case avEnum:
		n.symbols = sn.Symbols
	case avFixed:
		n.size = sn.Size
	case avArray, avMap:
		child := sn.Items
		if kind == avMap {
			child = sn.Values
		}
		c, err := avroCompile(child, ns, named)
		if err != nil {
			return nil, err
		}
		n.items = c
	case avUnion:
		for i := range sn.Branches {
			b, err := avroCompile(&sn.Branches[i], ns, named)
			if err != nil {
				return nil, err
			}
			n.branches = append(n.branches, b)
		}
	}
	return n, nil
}

// avroDefault turns a field default, as twmb/avro gives it, into a BPL
// value the codec writes.
func avroDefault(v any) any {
	bv, err := value.FromGo(v)
	if err != nil {
		return v
	}
	return bv
}

func (c *avroCodec) fullName() string { return c.root.name }
func (c *avroCodec) index() []int     { return nil }
func (c *avroCodec) canonical() string {
	return string(c.schema.Canonical())
}

// resolve returns a codec that reads data written with c's schema in the
// layout of reader's (schema evolution); c itself when they are the same.
func (c *avroCodec) resolve(reader schemaCodec) (schemaCodec, error) {
	r, ok := reader.(*avroCodec)
	if !ok || c.canonical() == r.canonical() {
		return c, nil
	}
	rs, err := avro.Resolve(c.schema, r.schema)
	if err != nil {
		return nil, err
	}
	return &avroCodec{schema: c.schema, root: c.root, resolved: rs, reader: r.root}, nil
}

// avroError is a value that does not fit the schema, at a field path.
type avroError struct {
	path string
	msg  string
}

func (e *avroError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return fmt.Sprintf("field %q: %s", e.path, e.msg)
}

// in returns err as seen from the enclosing field or element seg.
func avroIn(err error, seg string) error {
	var ae *avroError
	if errors.As(err, &ae) {
		p := seg
		if ae.path != "" {
			if strings.HasPrefix(ae.path, "[") {
				p += ae.path
			} else {
				p += "." + ae.path
			}
		}
		return &avroError{p, ae.msg}
	}
	return err
}

func avroWant(want string, v any) error {
	return &avroError{msg: fmt.Sprintf("want %s, got %s", want, value.Describe(v))}
}

func (c *avroCodec) appendEncode(dst []byte, v any) ([]byte, error) {
	return c.root.enc(dst, v)
}

func appendVarlong(dst []byte, n int64) []byte {
	return binary.AppendUvarint(dst, uint64(n<<1)^uint64(n>>63))
}

func (n *avroNode) enc(dst []byte, v any) ([]byte, error) {
	switch n.kind {
	case avNull:
		if v != nil {
			return nil, avroWant("null", v)
		}
		return dst, nil
	case avBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, avroWant("true or false", v)
		}
		if b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case avInt:
		i, ok := integer(v)
		if n.logical == lgDate {
			return n.encDate(dst, v)
		}
		if !ok || i < math.MinInt32 || i > math.MaxInt32 {
			return nil, avroWant("an int (32 bits)", v)
		}
		return appendVarlong(dst, i), nil
	case avLong:
		i, ok := integer(v)
		if !ok {
			if s, isStr := v.(string); isStr && strings.Contains(n.lt, "timestamp-") {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					switch {
					case strings.HasSuffix(n.lt, "-micros"):
						return appendVarlong(dst, t.UnixMicro()), nil
					case strings.HasSuffix(n.lt, "-nanos"):
						return appendVarlong(dst, t.UnixNano()), nil
					}
					return appendVarlong(dst, t.UnixMilli()), nil
				}
				return nil, avroWant("a timestamp (an integer, or RFC 3339 text)", v)
			}
			return nil, avroWant("a long (an integer)", v)
		}
		return appendVarlong(dst, i), nil
	case avFloat, avDouble:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		default:
			return nil, avroWant("a number", v)
		}
		if n.kind == avFloat {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case avBytes, avString:
		var b []byte
		switch x := v.(type) {
		case string:
			b = stringBytes(x)
		case []byte:
			if n.kind == avString && !utf8.Valid(x) {
				return nil, avroWant("a string", v)
			}
			b = x
		default:
			if n.logical == lgDecimal {
				return n.encDecimal(dst, v)
			}
			if n.kind == avString {
				return nil, avroWant("a string", v)
			}
			return nil, avroWant("bytes or a string", v)
		}
		switch n.logical {
		case lgDecimal:
			if _, isStr := v.(string); isStr {
				return n.encDecimal(dst, v)
			}
		case lgUUID:
			if !isUUID(b) {
				return nil, avroWant(`a UUID, as text of 32 hex digits in groups of 8-4-4-4-12 ("123e4567-e89b-12d3-a456-426614174000")`, v)
			}
		}
		dst = appendVarlong(dst, int64(len(b)))
		return append(dst, b...), nil
	case avFixed:
		if _, raw := v.([]byte); n.logical == lgDecimal && !raw { // raw bytes (a default's) are the value's own
			return n.encDecimal(dst, v)
		}
		var b []byte
		switch x := v.(type) {
		case []byte:
			b = x
		case string:
			b = stringBytes(x)
		}
		if b == nil && v != nil || len(b) != n.size {
			return nil, avroWant(fmt.Sprintf("%d bytes (fixed %s)", n.size, n.name), v)
		}
		return append(dst, b...), nil
	case avEnum:
		s, _ := v.(string)
		if i := slices.Index(n.symbols, s); i >= 0 {
			return appendVarlong(dst, int64(i)), nil
		}
		return nil, avroWant(fmt.Sprintf("one of the symbols of enum %s (%s)", n.name, strings.Join(n.symbols, " ")), v)
	case avRecord:
		return n.encRecord(dst, v)
	case avArray:
		l, ok := v.(*value.List)
		if !ok {
			return nil, avroWant("a list (array)", v)
		}
		if l.Len() > 0 {
			dst = appendVarlong(dst, int64(l.Len()))
			for i, e := range l.Values() {
				var err error
				if dst, err = n.items.enc(dst, e); err != nil {
					return nil, avroIn(err, fmt.Sprintf("[%d]", i))
				}
			}
		}
		return append(dst, 0), nil
	case avMap:
		l, ok := v.(*value.List) // an element without a name has the key ""
		if !ok {
			return nil, avroWant("a list with names (map)", v)
		}
		if l.Len() > 0 {
			dst = appendVarlong(dst, int64(l.Len()))
			for i, e := range l.Values() {
				name := l.Name(i)
				dst = appendVarlong(dst, int64(len(name)))
				dst = append(dst, name...)
				var err error
				if dst, err = n.items.enc(dst, e); err != nil {
					return nil, avroIn(err, name)
				}
			}
		}
		return append(dst, 0), nil
	case avUnion:
		return n.encUnion(dst, v)
	}
	return nil, fmt.Errorf("unsupported Avro type %d", n.kind)
}

func (n *avroNode) encRecord(dst []byte, v any) ([]byte, error) {
	l, ok := v.(*value.List)
	if !ok || l.Len() > 0 && !l.Named() {
		return nil, avroWant("a list with names (record "+n.name+")", v)
	}
	matched := 0
	for fi := range n.fields {
		f := &n.fields[fi]
		var val any
		found := false
		if fi < l.Len() && l.Name(fi) == f.name { // in the schema's order: no search
			val, found = l.Values()[fi], true
		} else if i := l.Index(f.name); i >= 0 {
			val, found = l.Values()[i], true
		}
		var err error
		switch {
		case found:
			matched++
			dst, err = f.node.enc(dst, val)
		case f.hasDefault:
			if f.node.kind == avUnion {
				dst = appendVarlong(dst, 0)
			}
			dst, err = f.defNode.enc(dst, f.def)
		case f.node.kind == avUnion && f.node.branches[0].kind == avNull:
			dst = appendVarlong(dst, 0)
		default:
			return nil, &avroError{path: f.name, msg: "missing, and it has no default"}
		}
		if err != nil {
			return nil, avroIn(err, f.name)
		}
	}
	if matched < l.Len() {
		for i := range l.Len() {
			name := l.Name(i)
			if !slices.Contains(n.names, name) {
				return nil, &avroError{path: name, msg: "not a field of record " + n.name}
			}
			if l.Index(name) != i {
				return nil, &avroError{path: name, msg: "given twice"}
			}
		}
	}
	return dst, nil
}

// encUnion writes v with the first branch that takes it, trying first the
// branches of v's own kind.
func (n *avroNode) encUnion(dst []byte, v any) ([]byte, error) {
	start := len(dst)
	var firstErr error
	for pass := range 2 {
		for i, b := range n.branches {
			if avroNatural(b, v) != (pass == 0) {
				continue
			}
			out, err := b.enc(appendVarlong(dst[:start], int64(i)), v)
			if err == nil {
				return out, nil
			}
			if firstErr == nil || pass == 0 && avroDepth(err) > avroDepth(firstErr) {
				firstErr = err
			}
		}
	}
	var ae *avroError
	if errors.As(firstErr, &ae) && ae.path != "" {
		return nil, firstErr // a record branch that nearly fit: say where
	}
	kinds := make([]string, len(n.branches))
	for i, b := range n.branches {
		kinds[i] = avroKindName(b)
	}
	return nil, avroWant("one of the union's types ("+strings.Join(kinds, " ")+")", v)
}

func avroDepth(err error) int {
	var ae *avroError
	if errors.As(err, &ae) && ae.path != "" {
		return 1 + strings.Count(ae.path, ".")
	}
	return 0
}

// avroNatural reports whether v is the BPL value b's kind decodes to.
func avroNatural(b *avroNode, v any) bool {
	switch v := v.(type) {
	case nil:
		return b.kind == avNull
	case bool:
		return b.kind == avBoolean
	case int64:
		return b.kind == avInt || b.kind == avLong
	case float64:
		return b.kind == avFloat || b.kind == avDouble
	case string:
		return b.kind == avString || b.kind == avEnum || b.logical == lgDecimal
	case []byte:
		return b.kind == avBytes || b.kind == avFixed
	case *value.List:
		if v.Len() > 0 && !v.Named() {
			return b.kind == avArray
		}
		return b.kind == avRecord || b.kind == avMap
	}
	return false
}

func avroKindName(n *avroNode) string {
	if n.name != "" {
		return n.name
	}
	if n.lt != "" { // "uuid", "timestamp-millis": what the value must be
		return n.lt
	}
	for name, k := range avroKinds {
		if k == n.kind && name != "error" {
			return name
		}
	}
	return "?"
}

const msPerDay = 24 * 60 * 60 * 1000

// encDate takes a BPL date (milliseconds since 1970, as (date) gives it)
// or "YYYY-MM-DD", and writes the day.
func (n *avroNode) encDate(dst []byte, v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, avroWant("a date (milliseconds since 1970, or \"YYYY-MM-DD\")", v)
		}
		return appendVarlong(dst, t.Unix()/86400), nil
	}
	ms, ok := integer(v)
	if !ok {
		return nil, avroWant("a date (milliseconds since 1970, or \"YYYY-MM-DD\")", v)
	}
	days := ms / msPerDay
	if ms%msPerDay < 0 {
		days--
	}
	if days < math.MinInt32 || days > math.MaxInt32 {
		return nil, avroWant("a date within an int's days", v)
	}
	return appendVarlong(dst, days), nil
}

// encDecimal takes a number or its decimal text and writes its unscaled
// value, two's complement big-endian.
func (n *avroNode) encDecimal(dst []byte, v any) ([]byte, error) {
	r := new(big.Rat)
	switch x := v.(type) {
	case int64:
		r.SetInt64(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, avroWant("a decimal number", v)
		}
		r.SetFloat64(x)
	case string:
		if _, ok := r.SetString(strings.TrimSpace(x)); !ok {
			return nil, avroWant("a decimal number", v)
		}
	default:
		return nil, avroWant("a decimal number", v)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n.scale)), nil)))
	if !r.IsInt() {
		if _, isFloat := v.(float64); !isFloat {
			return nil, avroWant(fmt.Sprintf("a decimal with at most %d digits after the point", n.scale), v)
		}
		// A float is rarely exact: round it to the scale.
		q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
		if new(big.Int).Mul(m.Abs(m), big.NewInt(2)).Cmp(r.Denom()) >= 0 {
			q.Add(q, big.NewInt(int64(r.Sign())))
		}
		r.SetInt(q)
	}
	if n.limit != nil && r.Num().CmpAbs(n.limit) >= 0 {
		// As fastavro refuses it: more digits than the precision, which
		// a reader would cut.
		digits := len(n.limit.String()) - 1
		return nil, avroWant(fmt.Sprintf("a decimal of at most %d digits, %d of them after the point (decimal(%d,%d))", digits, n.scale, digits, n.scale), v)
	}
	b := twosComplement(r.Num())
	if n.kind == avFixed {
		if len(b) > n.size {
			return nil, avroWant(fmt.Sprintf("a decimal that fits %d bytes", n.size), v)
		}
		pad := byte(0)
		if r.Sign() < 0 {
			pad = 0xff
		}
		for range n.size - len(b) {
			dst = append(dst, pad)
		}
		return append(dst, b...), nil
	}
	dst = appendVarlong(dst, int64(len(b)))
	return append(dst, b...), nil
}

// isUUID reports whether b is a UUID's text as RFC 4122 writes it:
// 8-4-4-4-12 hex digits, in either case.
func isUUID(b []byte) bool {
	if len(b) != 36 {
		return false
	}
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

func twosComplement(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -x = ^(x-1): the bytes of |x|-1, inverted, with room for the sign.
	m := new(big.Int).Sub(new(big.Int).Neg(x), big.NewInt(1))
	b := m.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	return b
}

func fromTwosComplement(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

func decimalText(unscaled *big.Int, scale int) string {
	if scale <= 0 {
		return unscaled.String()
	}
	return new(big.Rat).SetFrac(unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).FloatString(scale)
}
