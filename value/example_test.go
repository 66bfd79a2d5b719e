package value_test

import (
	"fmt"

	"github.com/brain4it/kafkabpl/value"
)

func ExampleParse() {
	vs, err := value.Parse(`("group" => "g1" "servers" => ("a:9092" "b:9092")) (<#1> 1 2) `)
	if err != nil {
		panic(err)
	}
	config := vs[0].(*value.List)
	servers, _ := config.Get("servers")
	fmt.Println(servers, vs[1].(*value.List).Tagged())
	// Output: ("a:9092" "b:9092") true
}

func ExampleFormat() {
	reading := value.NewList().AppendNamed("celsius", 21.0).AppendNamed("unit", "C")
	both := value.NewList(reading, reading) // one list, twice
	fmt.Println(value.Format(reading))
	fmt.Println(value.Format(both))
	// Output:
	// ("celsius" => 21 "unit" => "C")
	// ((<#1> "celsius" => 21 "unit" => "C") <@1>)
}

func ExampleList_AppendNamed() {
	msgs := value.NewList()
	msgs.AppendNamed("c7", "full").AppendNamed("c7", "empty") // a repeated name stays twice
	first, _ := msgs.Get("c7")
	fmt.Println(msgs.Len(), first, msgs)
	// Output: 2 full ("c7" => "full" "c7" => "empty")
}
