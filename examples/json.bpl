(### "JSON: a list with names is sent as a JSON object (in order), a list without")
(### "names as an array; the consumer reads them back as lists.")

(set c (kafka-create "consumer" (list "servers" => kafka-servers "topics" => "telemetry" "value-deserializer" => "JSON")))
(set p (kafka-create "producer" (list "servers" => kafka-servers "value-serializer" => "JSON")))

(set reading ("device" => "boiler-2" "temperature" => 71.5 "alarms" => ("overheat") "ok" => false))
(### "The messages argument is a list of messages: here one, the reading, keyed by its device.")
(kafka-send p "telemetry" (list "boiler-2" => reading))

(set poll-until (function (id topic n)
  (local got polls)
  (set got (list))
  (set polls 0)
  (while (and (< (size got) n) (< polls 20))
    (set got (concat got (get (kafka-poll id topic 1000) topic)))
    (set polls (+ polls 1)))
  got))
(set back (get (poll-until c "telemetry" 1) "boiler-2"))
(print "temperature:" (get back "temperature") "first alarm:" (get (get back "alarms") 0))
(assert (= back reading) "the reading changed on the way")

(### "A consumer reading the same topic as plain text sees the JSON itself.")
(set raw (kafka-create "consumer" (list "servers" => kafka-servers "auto-offset-reset" => "earliest")))
(print "as text:" (get (poll-until raw "telemetry" 1) 0))

(kafka-destroy p)
(kafka-destroy c)
(kafka-destroy raw)
