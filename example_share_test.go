package kafkabpl_test

import (
	"context"
	"fmt"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// A job worker of a share group: it accepts a job it did, releases one to
// be done again later (it comes back with its delivery count one higher)
// and rejects one it can never do. Other workers of the group would share
// the jobs, even those of one partition.
func ExampleLibrary_Ack() {
	cluster, err := embedded.Start(embedded.Port(0)) // free ports of 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)

	p, err := lib.Create(ctx, kafkabpl.Producer, servers)
	if err != nil {
		panic(err)
	}
	if _, err := lib.Send(ctx, p, []string{"jobs"}, []kafkabpl.Message{{Value: "resize"}, {Value: "upload"}, {Value: "???"}}); err != nil {
		panic(err)
	}
	// "auto-offset-reset" sets the whole share group's
	// share.auto.offset.reset: read the jobs already sent.
	w, err := lib.Create(ctx, kafkabpl.ShareConsumer, map[string]any{"servers": servers, "group": "workers", "topics": "jobs", "auto-offset-reset": "earliest"})
	if err != nil {
		panic(err)
	}
	poll := func() []kafkabpl.Record {
		for {
			res, err := lib.Poll(ctx, w, 5*time.Second)
			if err != nil {
				panic(err)
			}
			if res.Len() > 0 {
				return res.Topics[0].Records
			}
		}
	}
	for _, r := range poll() {
		fmt.Println(r.Value(), "delivery", r.DeliveryCount())
		ack := kafkabpl.AckAccept
		switch r.Value() {
		case "upload":
			ack = kafkabpl.AckRelease // the server is busy: later
		case "???":
			ack = kafkabpl.AckReject
		}
		if err := lib.Ack(w, ack, r.ID()); err != nil {
			panic(err)
		}
	}
	if err := lib.Commit(ctx, w); err != nil { // sends the acknowledgements
		panic(err)
	}
	for _, r := range poll() {
		fmt.Println(r.Value(), "delivery", r.DeliveryCount())
	}
	// Output:
	// resize delivery 1
	// upload delivery 1
	// ??? delivery 1
	// upload delivery 2
}
