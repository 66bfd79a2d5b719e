package serde_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func Example() {
	ctx := context.Background()

	// A serde by a config's name, Java's class names included.
	long := serde.Lookup("org.apache.kafka.common.serialization.LongSerializer")
	b, _ := long.Encode(ctx, "", int64(-2), 1, "key")
	v, _ := long.Decode(ctx, "", b, "key")
	fmt.Printf("%s: % x reads back as %v\n", long.Name(), b, v)
	if _, err := long.Encode(ctx, "", "many", 2, "key"); errors.Is(err, value.ErrInvalidArgument) {
		fmt.Println(err)
	}

	// Avro through a schema registry (here franz-go's fake, in memory).
	fake := srfake.New()
	defer fake.Close()
	reg, err := serde.NewRegistry(serde.RegistryConfig{
		URL:          fake.URL(),
		AutoRegister: true,
		ValueSchema:  `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"}]}`,
	})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	ser, err := serde.Avro.Bind(reg, serde.ValueSerializer)
	if err != nil {
		panic(err)
	}
	user := value.NewList().AppendNamed("name", "ann").AppendNamed("age", int64(31))
	b, err = ser.Encode(ctx, "users", user, 1, "")
	if err != nil {
		panic(err)
	}
	deser, _ := serde.Avro.Bind(reg, serde.ValueDeserializer)
	v, err = deser.Decode(ctx, "users", b, "value")
	fmt.Println(value.Format(v), err)

	// A value that does not fit the schema fails its record alone.
	_, err = ser.Encode(ctx, "users", value.NewList().AppendNamed("name", "bob"), 2, "")
	var re *serde.RecordError
	fmt.Println(errors.As(err, &re), err)
	// Output:
	// Long: ff ff ff ff ff ff ff fe reads back as -2
	// message 2 key: the Long serializer cannot encode the string "many": not an integer
	// ("name" => "ann" "age" => 31) <nil>
	// true message 2 to topic "users": the Avro serializer cannot encode the list ("name" => "bob"): field "age": missing, and it has no default
}
