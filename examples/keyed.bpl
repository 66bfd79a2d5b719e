(### "Keyed messages: a message's name is its key. Messages with the same key")
(### "go to the same partition (the one Java's client would pick), in order,")
(### "and two messages with the same key stay two messages.")

(kafka-create-topics kafka-servers "readings" "partitions" => 3)

(set c (kafka-create "consumer" (list "servers" => kafka-servers "topics" => "readings" "poll-format" => "records")))
(set p (kafka-create "producer" kafka-servers))
(kafka-send p "readings" ("sensor-1" => "20.5" "sensor-2" => "7.1" "sensor-1" => "20.7" "sensor-3" => "0.0" "sensor-2" => "7.3"))

(### "Collect the five records; each one says its partition.")
(set records (list))
(set polls 0)
(while (and (< (size records) 5) (< polls 20))
  (set records (concat records (get (kafka-poll c 1000) "readings")))
  (set polls (+ polls 1))
  null)

(### "Where each key went, and each key's values in the order sent.")
(set by-key (list))
(for-each records r
  (set key (get r "key"))
  (when (= (get by-key key) null)
    (put by-key key (list "partition" => (get r "partition") "values" => (list))))
  (push (get (get by-key key) "values") (get r "value")))
(for-each (list "sensor-1" "sensor-2" "sensor-3") key
  (print key "->" (get by-key key)))

(kafka-delete-app p)
(kafka-delete-app c)
