package stream_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/stream"
)

// A stream upper-cases each reading, filters out empty ones and sends
// alerts to a topic of their own, exactly once; a read_committed consumer
// then reads what it wrote.
func ExampleRuntime_Start() {
	cluster, err := embedded.Start(embedded.Port(0)) // free ports of 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard) // streams log starting and stopping there
	defer lib.Close(ctx)

	p, err := lib.Create(ctx, kafkabpl.Producer, servers)
	if err != nil {
		panic(err)
	}
	if _, err := lib.Send(ctx, p, []string{"words"}, []kafkabpl.Message{
		{Key: "a", Value: "hello"}, {Key: "b", Value: ""}, {Key: "c", Value: "alarm"},
	}); err != nil {
		panic(err)
	}

	upper := func(_ context.Context, in *kafkabpl.Record) ([]stream.Output, error) {
		v := in.Value().(string)
		switch v {
		case "": // filtered out
			return nil, nil
		case "alarm": // to the output topic, and an alert elsewhere
			return []stream.Output{
				{Message: kafkabpl.Message{Key: in.Key(), Value: strings.ToUpper(v)}},
				{Topic: "alerts", Message: kafkabpl.Message{Key: in.Key(), Value: v}},
			}, nil
		}
		return []stream.Output{{Message: kafkabpl.Message{Key: in.Key(), Value: strings.ToUpper(v)}}}, nil
	}
	s, err := stream.Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "upper"},
		stream.Spec{From: []string{"words"}, To: "upper", Transform: upper})
	if err != nil {
		panic(err)
	}

	c, err := lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "topics": []string{"upper", "alerts"},
		"auto-offset-reset": "earliest", "isolation-level": "read_committed"})
	if err != nil {
		panic(err)
	}
	var lines []string
	for len(lines) < 3 {
		polled, err := lib.Poll(ctx, c, 5*time.Second)
		if err != nil {
			panic(err)
		}
		for _, topic := range polled.Topics {
			for _, r := range topic.Records {
				lines = append(lines, fmt.Sprintf("%s: %v => %v", r.Topic(), r.Key(), r.Value()))
			}
		}
	}
	slices.Sort(lines) // the two topics may come in either order
	fmt.Println(strings.Join(lines, "\n"))
	for {
		st, err := stream.Of(lib).Status(ctx, s)
		if err != nil {
			panic(err)
		}
		if st.Processed == 3 { // counted once committed, just after the outputs show
			fmt.Println(st.State, "processed", st.Processed, "produced", st.Produced, "dropped", st.Dropped)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Output:
	// alerts: c => alarm
	// upper: a => HELLO
	// upper: c => ALARM
	// running processed 3 produced 3 dropped 1
}
