(### "Sends numbers with the numeric serializers, short-named as brain4it")
(### "scripts may: to topic doubles 8 messages, Integer keys (names, which")
(### "are text: the Integer serializer reads numeric text) and Double values;")
(### "to topic longs 6 record lists with Long keys and values; to topic")
(### "floats 9 messages, Long keys (names) and Float values, each rounded to")
(### "the nearest float: 16777217 is sent as 16777216. Java's client must")
(### "read each exactly; see typedMessages in java_interop_test.go.")
(set d (kafka-create "producer" (list "servers" => kafka-servers
  "key-serializer" => "Integer" "value-serializer" => "Double")))
(print "sent doubles" (kafka-send d "doubles" ("0" => 0.1 "1" => -273.15 "-1" => 21.5
  "42" => 3 "-42" => -0.0 "2147483647" => 1.0E300 "-2147483648" => -2.5E-8
  "7" => 4.9E-324)))
(kafka-destroy d)
(set l (kafka-create "producer" (list "servers" => kafka-servers
  "key-serializer" => "Long" "value-serializer" => "Long")))
(print "sent longs" (kafka-send l "longs" (
  ("key" => 9007199254740993 "value" => -9223372036854775808)
  ("key" => -1 "value" => 9223372036854775807)
  ("key" => 0 "value" => -42)
  ("key" => 123456789012 "value" => 1)
  ("key" => -9223372036854775808 "value" => 0)
  ("key" => 9223372036854775807 "value" => -9007199254740993)) "records" => true))
(kafka-destroy l)
(set f (kafka-create "producer" (list "servers" => kafka-servers
  "key-serializer" => "Long" "value-serializer" => "Float")))
(print "sent floats" (kafka-send f "floats" ("10" => 0.1 "-273" => -273.15
  "21" => 21.5 "3" => 3 "-1" => -0.0 "9223372036854775807" => 3.4028235E38
  "-9223372036854775808" => 1.4E-45 "4294967296" => 1.17549435E-38
  "16777217" => 16777217)))
(kafka-destroy f)
