(### "Avro through a schema registry: kafkabpl run --embedded serves one beside the")
(### "cluster, at schema-registry-url. The schema is given inline, as a list written")
(### "as JSON (or as its text); the producer registers it under the subject avro-readings-value.")

(set schema ("type" => "record" "name" => "Reading" "namespace" => "iot" "fields" => (
  ("name" => "device" "type" => "string")
  ("name" => "temperature" "type" => "double")
  ("name" => "at" "type" => ("type" => "long" "logicalType" => "timestamp-millis"))
  ("name" => "alarms" "type" => ("type" => "array" "items" => "string") "default" => ()))))

(set avro (list "servers" => kafka-servers "schema-registry-url" => schema-registry-url))
(set p (kafka-create "producer" (concat avro (list "value-serializer" => "Avro" "value-schema" => schema))))
(set c (kafka-create "consumer" (concat avro (list "topics" => "avro-readings" "value-deserializer" => "Avro"))))

(### "A value that does not fit the schema fails its own record; the others are sent.")
(set sent (try
  (kafka-send p "avro-readings" (list
    "boiler-1" => ("device" => "boiler-1" "temperature" => 71.5 "at" => 1700000000000)
    "boiler-2" => ("device" => "boiler-2" "temperature" => "hot" "at" => 1700000000000)
    "boiler-3" => ("device" => "boiler-3" "temperature" => 65 "at" => 1700000000500 "alarms" => ("low-water"))))
  (ex "InvalidArgument" => ex)))
(print "delivered:" (get sent "delivered"))
(print "failed:" (get (get (get sent "failed") 0) "error"))

(set poll-until (function (id topic n)
  (local got polls)
  (set got (list))
  (set polls 0)
  (while (and (< (size got) n) (< polls 20))
    (set got (concat got (get (kafka-poll id topic 1000) topic)))
    (set polls (+ polls 1)))
  got))
(set back (poll-until c "avro-readings" 2))
(print "boiler-1:" (get back "boiler-1"))
(print "boiler-3:" (get back "boiler-3"))

(### "A producer given no schema writes with the latest one of the topic's subject, avro-readings-value.")
(set strict (kafka-create "producer" (concat avro (list "value-serializer" => "Avro" "auto-register-schemas" => false))))
(kafka-send strict "avro-readings" (list "boiler-4" => ("device" => "boiler-4" "temperature" => 80.25 "at" => 1700000001000)))
(print "boiler-4:" (get (poll-until c "avro-readings" 1) "boiler-4"))

(kafka-destroy p)
(kafka-destroy strict)
(kafka-destroy c)
