package kfake

// kafkabpl patch: this file is new. kfake stored any topic config a
// CreateTopics, AlterConfigs or IncrementalAlterConfigs named, with any
// value: "retention.msec" => 5 and "retention.ms" => "soon" were taken,
// where Kafka refuses both with INVALID_CONFIG. These are Kafka 4.4's topic
// configs (LogConfig's, their types and validators), and the check Kafka
// makes of a value, with its error messages.

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type topicConfigType int8

const (
	tcInt topicConfigType = iota
	tcLong
	tcDouble
	tcBoolean
	tcString
	tcList
	tcReplicas // a throttled replicas list: "*", or partition:broker items
)

// topicConfigSpec is one topic config: its type, for numbers the range
// it must be in, for strings and list items the values it may take.
type topicConfigSpec struct {
	typ      topicConfigType
	min, max float64
	in       []string
	orMinus1 bool // -1 is valid too (compression.gzip.level)
}

func tcNum(typ topicConfigType, lo, hi float64) topicConfigSpec {
	return topicConfigSpec{typ: typ, min: lo, max: hi}
}

var (
	inf   = math.Inf(1)
	ninf  = math.Inf(-1)
	tcAny = func(typ topicConfigType) topicConfigSpec { return tcNum(typ, ninf, inf) }
)

// kafkaTopicConfigs are Kafka 4.4.0's topic configs
// (org.apache.kafka.storage.internals.log.LogConfig), and kfake's own
// kfake.is_internal.
var kafkaTopicConfigs = map[string]topicConfigSpec{
	"cleanup.policy":                          {typ: tcList, in: []string{"compact", "delete"}},
	"compression.gzip.level":                  {typ: tcInt, min: 1, max: 9, orMinus1: true},
	"compression.lz4.level":                   tcNum(tcInt, 1, 17),
	"compression.type":                        {typ: tcString, in: []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}},
	"compression.zstd.level":                  tcNum(tcInt, -131072, 22),
	"delete.retention.ms":                     tcNum(tcLong, 0, inf),
	"errors.deadletterqueue.group.enable":     tcAny(tcBoolean),
	"file.delete.delay.ms":                    tcNum(tcLong, 0, inf),
	"flush.messages":                          tcNum(tcLong, 1, inf),
	"flush.ms":                                tcNum(tcLong, 0, inf),
	"follower.replication.throttled.replicas": {typ: tcReplicas},
	"index.interval.bytes":                    tcNum(tcInt, 0, inf),
	"internal.segment.bytes":                  tcAny(tcInt),
	"leader.replication.throttled.replicas":   {typ: tcReplicas},
	"local.retention.bytes":                   tcNum(tcLong, -2, inf),
	"local.retention.ms":                      tcNum(tcLong, -2, inf),
	"max.compaction.lag.ms":                   tcNum(tcLong, 1, inf),
	"max.decompressed.message.bytes":          tcNum(tcInt, 1, 2147483639),
	"max.message.bytes":                       tcNum(tcInt, 0, inf),
	"message.timestamp.after.max.ms":          tcNum(tcLong, 0, inf),
	"message.timestamp.before.max.ms":         tcNum(tcLong, 0, inf),
	"message.timestamp.type":                  {typ: tcString, in: []string{"CreateTime", "LogAppendTime"}},
	"min.cleanable.dirty.ratio":               tcNum(tcDouble, 0, 1),
	"min.compaction.lag.ms":                   tcNum(tcLong, 0, inf),
	"min.insync.replicas":                     tcNum(tcInt, 1, inf),
	"preallocate":                             tcAny(tcBoolean),
	"remote.copy.lag.bytes":                   tcNum(tcLong, -1, inf),
	"remote.copy.lag.ms":                      tcNum(tcLong, -1, inf),
	"remote.log.copy.disable":                 tcAny(tcBoolean),
	"remote.log.delete.on.disable":            tcAny(tcBoolean),
	"remote.storage.enable":                   tcAny(tcBoolean),
	"retention.bytes":                         tcAny(tcLong),
	"retention.ms":                            tcNum(tcLong, -1, inf),
	"segment.bytes":                           tcNum(tcInt, 1048576, inf),
	"segment.index.bytes":                     tcNum(tcInt, 4, inf),
	"segment.jitter.ms":                       tcNum(tcLong, 0, inf),
	"segment.ms":                              tcNum(tcLong, 1, inf),
	"unclean.leader.election.enable":          tcAny(tcBoolean),

	"kfake.is_internal": tcAny(tcBoolean),
}

var throttledReplica = regexp.MustCompile(`^[0-9]+:[0-9]+$`)

// topicConfigProblem returns why Kafka refuses to set topic config k to v,
// with INVALID_CONFIG, in Kafka's words, or "" when it takes it. A null
// value is left to the caller, as before.
func topicConfigProblem(k string, v *string) string {
	spec, ok := kafkaTopicConfigs[k]
	if !ok {
		return "Unknown topic config name: " + k
	}
	if v == nil {
		return ""
	}
	s := strings.TrimSpace(*v)
	invalid := func(why string, args ...any) string {
		return fmt.Sprintf("Invalid value %s for configuration %s: %s", *v, k, fmt.Sprintf(why, args...))
	}
	switch spec.typ {
	case tcInt, tcLong, tcDouble:
		var n float64
		switch spec.typ {
		case tcInt:
			i, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return invalid("Not a number of type INT")
			}
			n = float64(i)
		case tcLong:
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return invalid("Not a number of type LONG")
			}
			n = float64(i)
		default:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return invalid("Not a number of type DOUBLE")
			}
			n = f
		}
		if spec.orMinus1 && n == -1 {
			return ""
		}
		if n < spec.min {
			return invalid("Value must be at least %s", strconv.FormatFloat(spec.min, 'f', -1, 64))
		}
		if n > spec.max {
			return invalid("Value must be no more than %s", strconv.FormatFloat(spec.max, 'f', -1, 64))
		}
	case tcBoolean:
		if !strings.EqualFold(s, "true") && !strings.EqualFold(s, "false") {
			return invalid("Expected value to be either true or false")
		}
	case tcString:
		if !slices.Contains(spec.in, s) {
			return invalid("String must be one of: %s", strings.Join(spec.in, ", "))
		}
	case tcList:
		for _, item := range topicConfigItems(s) {
			if !slices.Contains(spec.in, item) {
				return invalid("String must be one of: %s", strings.Join(spec.in, ", "))
			}
		}
	case tcReplicas:
		items := topicConfigItems(s)
		if len(items) == 1 && items[0] == "*" {
			return ""
		}
		for _, item := range items {
			if !throttledReplica.MatchString(item) {
				return invalid("must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
			}
		}
	}
	return ""
}

// topicConfigItems splits a list config's value as Kafka does: on commas,
// each item trimmed; an empty value is no items.
func topicConfigItems(s string) []string {
	if s == "" {
		return nil
	}
	items := strings.Split(s, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items
}

// createTopicConfigsProblem is topicConfigProblem of the first config of
// a CreateTopics topic that Kafka refuses, or "".
func createTopicConfigsProblem(configs []kmsg.CreateTopicsRequestTopicConfig) string {
	for _, rc := range configs {
		if p := topicConfigProblem(rc.Name, rc.Value); p != "" {
			return p
		}
	}
	return ""
}
