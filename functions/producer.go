package functions

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/box"
	"github.com/brain4it/kafkabpl/internal/words"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
)

const sendUsage = `(kafka-send id topics messages "key" => k "partition" => n "headers" => (...) "timestamp" => ms "records" => true)`

func (lib table) bplSend(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-send", l)
	if err != nil {
		return nil, err
	}
	topics, err := a.topics(a.pos[1], "topics")
	if err != nil {
		return nil, err
	}
	n, msgAt, err := a.messages(a.pos[2])
	if err != nil {
		return nil, err
	}
	sent, err := lib.SendEach(ctx, id, topics, n, msgAt)
	return int64(sent), err
}

// messages reads kafka-send's call-wide named arguments and returns how
// many messages there are and a function that reads message i. Messages
// are read one at a time, as Send builds their records, rather than into
// a slice of their own first: for a list of 1,000 that slice was 88 KB a
// call.
func (a *args) messages(v any) (int, func(i int) (kafkabpl.Message, error), error) {
	var common kafkabpl.Message
	if err := a.recordFields(&common, a.named, 0, []string{"key", "partition", "headers", "timestamp"}); err != nil {
		return 0, nil, err
	}
	asRecords := false
	if r, ok := a.named.Get("records"); ok {
		b, isBool := r.(bool)
		if !isBool {
			return 0, nil, a.errorf(`"records": want true or false, got %s`, value.Describe(r))
		}
		asRecords = b
	}
	list, isList := v.(*value.List)
	if !isList {
		list = value.NewList(v)
	}
	msgAt := func(i int) (kafkabpl.Message, error) {
		m, val := common, list.At(i)
		if asRecords {
			rec, ok := val.(*value.List)
			if !ok {
				return m, a.errorf("message %d: with \"records\" => true each message is a record list (\"key\" \"value\" \"partition\" \"headers\" \"timestamp\"), got %s", i+1, value.Describe(val))
			}
			err := a.recordFields(&m, rec, i+1, []string{"key", "value", "partition", "headers", "timestamp"})
			return m, err
		}
		m.Value = val
		if list.Name(i) != "" {
			// The key is the element's name, boxed in place (see
			// box.InPlace): the list is not changed during the call, and
			// the record keeps the name's bytes, not the interface.
			box.InPlace(&m.Key, &list.Names()[i])
		}
		return m, nil
	}
	return list.Len(), msgAt, nil
}

// recordFields stores the named fields of src (a record list, message pos,
// or the call's named arguments, pos 0) into m.
func (a *args) recordFields(m *kafkabpl.Message, src *value.List, pos int, allowed []string) error {
	where := "" // prefixes the field in errors
	if pos > 0 {
		where = fmt.Sprintf("message %d ", pos)
	}
	for name, v := range src.All() {
		if !slices.Contains(allowed, name) {
			if name == "records" && where == "" {
				continue
			}
			return a.errorf("%sfield %q: want one of %s%s", where, name, strings.Join(allowed, ", "), words.Suggest(name, allowed))
		}
		switch name {
		case "key":
			m.Key = v
		case "value":
			m.Value = v
		case "partition":
			p, err := a.int(v, where+`"partition"`, 0, math.MaxInt32)
			if err != nil {
				return err
			}
			m.Partition = new(int32(p))
		case "timestamp":
			ms, err := a.int(v, where+`"timestamp"`, 0, math.MaxInt64)
			if err != nil {
				return err
			}
			m.Timestamp = time.UnixMilli(ms)
		case "headers":
			hl, ok := v.(*value.List)
			if !ok || hl.Len() > 0 && !hl.Named() {
				return a.errorf(`%s"headers": want a named list ("name" => value ...), got %s`, where, value.Describe(v))
			}
			m.Headers = make([]kafkabpl.Header, 0, hl.Len())
			for hn, hv := range hl.All() {
				if hn == "" {
					return a.errorf(`%s"headers": element %s has no name`, where, value.Describe(hv))
				}
				b, err := serde.String.Encode(context.Background(), "", hv, pos, "header "+hn)
				if err != nil {
					return fnError(a.fn, err)
				}
				m.Headers = append(m.Headers, kafkabpl.Header{Key: hn, Value: b})
			}
		}
	}
	return nil
}
