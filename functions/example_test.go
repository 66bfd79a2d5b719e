package functions_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/functions"
	"github.com/brain4it/kafkabpl/value"
)

// The BPL functions, called from Go as a BPL runtime would call them. The
// poll result is a BPL list: each message is its value, named by its key.
func ExampleTable() {
	cluster, err := embedded.Start(embedded.Port(0)) // free ports of 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	f := functions.Table(lib)

	c, _ := f["kafka-create"](ctx, value.NewList("consumer", servers))
	fmt.Println(f["kafka-subscribe"](ctx, value.NewList(c, value.NewList("lights", "containers"))))

	p, _ := f["kafka-producer"](ctx, value.NewList(servers).AppendNamed("value-serializer", "JSON"))
	msgs := value.NewList().
		AppendNamed("c7", value.NewList().AppendNamed("level", int64(80))).
		AppendNamed("c7", value.NewList().AppendNamed("level", int64(95)))
	fmt.Println(f["kafka-send"](ctx, value.NewList(p, "containers", msgs)))

	consumerJSON, _ := f["kafka-consumer"](ctx, value.NewList(servers).
		AppendNamed("value-deserializer", "JSON").
		AppendNamed("auto-offset-reset", "earliest").
		AppendNamed("topics", "containers"))
	res, err := f["kafka-poll"](ctx, value.NewList(consumerJSON, int64(5000)))
	fmt.Println(value.Format(res), err)

	_, err = f["kafka-poll"](ctx, value.NewList(p, int64(10)))
	fmt.Println(value.ErrorType(err), errors.Is(err, kafkabpl.ErrWrongKind))
	// Output:
	// ("containers" "lights") <nil>
	// 2 <nil>
	// ("containers" => ("c7" => ("level" => 80) "c7" => ("level" => 95))) <nil>
	// WrongKind true
}

// The admin functions as a BPL script calls them, on an admin handle or
// straight on the servers.
func Example_admin() {
	// One broker that creates no topic on first use: what exists is what
	// the admin functions made.
	cluster, err := embedded.Start(embedded.Port(0), embedded.NoAutoCreate())
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	fns := functions.Table(lib)
	call := func(name string, args *value.List) any {
		v, err := fns[name](ctx, args)
		if err != nil {
			return err
		}
		return v
	}
	args := value.NewList // a BPL call's arguments

	a := call("kafka-create", args("admin", servers))
	// (kafka-create-topics a ("sensors" "alarms") "partitions" => 2)
	fmt.Println(value.Format(call("kafka-create-topics",
		args(a, args("sensors", "alarms")).AppendNamed("partitions", int64(2)))))
	fmt.Println(value.Format(call("kafka-create-topics", args(servers, "sensors"))))
	fmt.Println(value.Format(call("kafka-list-topics", args(a))))
	fmt.Println(value.Format(call("kafka-describe-topics", args(a, "sensors"))))
	fmt.Println(value.Format(call("kafka-create-partitions", args(a, "sensors", int64(3)))))
	fmt.Println(value.Format(call("kafka-delete-topics", args(a, args("alarms", "missing")))))
	fmt.Println(value.Format(call("kafka-list-topics", args(servers))))
	fmt.Println(call("kafka-create-topics", args(a, "t").AppendNamed("replication-factor", int64(3))))
	// Output:
	// ("sensors" => true "alarms" => true)
	// ("sensors" => false)
	// ("alarms" "sensors")
	// ("sensors" => ("partitions" => (("partition" => 0 "leader" => 0 "replicas" => (0) "isr" => (0)) ("partition" => 1 "leader" => 0 "replicas" => (0) "isr" => (0)))))
	// true
	// ("alarms" => true "missing" => false)
	// ("sensors")
	// kafka-create-topics: topic "t": INVALID_REPLICATION_FACTOR: Replication factor is below 1 or larger than the number of available brokers.
}
