package functions

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
)

// The offset admin functions: kafka-list-offsets, kafka-delete-records,
// kafka-reset-offsets and kafka-delete-group.

func (lib table) addOffsetFunctions(m map[string]value.Func) {
	m["kafka-list-offsets"] = lib.bplListOffsets
	m["kafka-delete-records"] = lib.bplDeleteRecords
	m["kafka-reset-offsets"] = lib.bplResetOffsets
	m["kafka-delete-group"] = lib.bplDeleteGroup
}

// offsetsList is an offset function's result: (("partition" => 0
// "offset" => 5) ...), with "timestamp" => ms where one was asked for,
// and "offset" => null "error" => why for a partition that failed.
func offsetsList(pos []kafkabpl.PartitionOffset, timestamps bool) *value.List {
	out := &value.List{}
	for _, po := range pos {
		l := &value.List{}
		l.AppendNamed("partition", int64(po.Partition))
		if po.Err != nil {
			l.AppendNamed("offset", nil)
			l.AppendNamed("error", po.Err.Error())
		} else {
			l.AppendNamed("offset", po.Offset)
			if timestamps && po.Timestamp >= 0 {
				l.AppendNamed("timestamp", po.Timestamp)
			}
		}
		out.Append(l)
	}
	return out
}

// offsetSpec reads an offset argument as kafka-seek reads its position:
// "earliest" (or "beginning"), "latest" (or "end"), or ("timestamp" =>
// ms); for a reset, an offset or ("group" => name) too.
func (a *args) offsetSpec(v any, reset bool) (kafkabpl.OffsetSpec, error) {
	want := `offset: want "earliest", "latest" or ("timestamp" => ms)`
	if reset {
		want = `offset: want "earliest", "latest", an offset, ("timestamp" => ms) or ("group" => name)`
	}
	switch v := v.(type) {
	case string:
		switch strings.ToLower(v) {
		case "earliest", "beginning":
			return kafkabpl.OffsetEarliest(), nil
		case "latest", "end":
			return kafkabpl.OffsetLatest(), nil
		}
	case *value.List:
		if v.Len() == 1 {
			if ts, ok := v.Get("timestamp"); ok {
				ms, err := a.int(ts, `offset "timestamp"`, 0, math.MaxInt64)
				return kafkabpl.OffsetAtTime(time.UnixMilli(ms)), err
			}
			if g, ok := v.Get("group"); ok && reset {
				if name, ok := g.(string); ok && name != "" {
					return kafkabpl.OffsetsOf(name), nil
				}
			}
		}
	case int64, float64:
		if reset {
			n, err := a.int(v, "offset", 0, math.MaxInt64)
			return kafkabpl.OffsetAt(n), err
		}
	}
	return kafkabpl.OffsetSpec{}, a.errorf("%s, got %s", want, value.Describe(v))
}

const listOffsetsUsage = `(kafka-list-offsets target topic ["earliest"|"latest"|("timestamp" => ms)])`

func (lib table) bplListOffsets(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-list-offsets", l)
	if err != nil {
		return nil, err
	}
	topic, err := a.str(1, "topic")
	if err != nil {
		return nil, err
	}
	spec := kafkabpl.OffsetLatest()
	if len(a.pos) == 3 {
		if spec, err = a.offsetSpec(a.pos[2], false); err != nil {
			return nil, err
		}
	}
	pos, err := lib.ListOffsets(ctx, a.pos[0], topic, spec)
	if err != nil {
		return nil, err
	}
	return offsetsList(pos, true), nil
}

const deleteRecordsUsage = `(kafka-delete-records target topic ("partition" => offset ...))`

func (lib table) bplDeleteRecords(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-delete-records", l)
	if err != nil {
		return nil, err
	}
	topic, err := a.str(1, "topic")
	if err != nil {
		return nil, err
	}
	offsets, ok := a.pos[2].(*value.List)
	if !ok || offsets.Len() == 0 {
		return nil, a.errorf(`offsets: want ("partition" => offset ...), an offset of -1 for the end, got %s`, value.Describe(a.pos[2]))
	}
	before := map[int32]int64{}
	for name, v := range offsets.All() {
		p, err := strconv.ParseInt(name, 10, 32)
		if err != nil || p < 0 {
			return nil, a.errorf(`offsets: want partition numbers as names ("0" => 100), got %s`, value.Describe(offsets))
		}
		o, err := a.int(v, "offsets "+strconv.Quote(name), -1, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		before[int32(p)] = o
	}
	pos, err := lib.DeleteRecords(ctx, a.pos[0], topic, before)
	if err != nil {
		return nil, err
	}
	return offsetsList(pos, false), nil
}

const resetOffsetsUsage = `(kafka-reset-offsets target group topic "earliest"|"latest"|offset|("timestamp" => ms)|("group" => name))`

func (lib table) bplResetOffsets(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-reset-offsets", l)
	if err != nil {
		return nil, err
	}
	group, err := a.str(1, "group")
	if err != nil {
		return nil, err
	}
	topic, err := a.str(2, "topic")
	if err != nil {
		return nil, err
	}
	spec, err := a.offsetSpec(a.pos[3], true)
	if err != nil {
		return nil, err
	}
	pos, err := lib.ResetGroupOffsets(ctx, a.pos[0], group, topic, spec)
	if err != nil {
		return nil, err
	}
	return offsetsList(pos, false), nil
}

func (lib table) bplDeleteGroup(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-delete-group", l)
	if err != nil {
		return nil, err
	}
	group, err := a.str(1, "group")
	if err != nil {
		return nil, err
	}
	if err := lib.DeleteGroup(ctx, a.pos[0], group); err != nil {
		return nil, err
	}
	return true, nil
}
