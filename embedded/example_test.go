package embedded_test

import (
	"context"
	"fmt"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Start a one-broker cluster on a free port, produce a record to a topic that
// the broker creates on first use, and read it back.
func ExampleStart() {
	c, err := embedded.Start(embedded.Port(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	cl, err := kgo.NewClient(
		kgo.SeedBrokers(c.Addrs()...),
		kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics("sensors"),
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cl.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec := &kgo.Record{Topic: "sensors", Key: []byte("t1"), Value: []byte("21.5")}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		fmt.Println(err)
		return
	}
	fetches := cl.PollFetches(ctx)
	if err := fetches.Err(); err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range fetches.Records() {
		fmt.Printf("%s partition %d offset %d: %s=%s\n", r.Topic, r.Partition, r.Offset, r.Key, r.Value)
	}
	// Output: sensors partition 0 offset 0: t1=21.5
}
