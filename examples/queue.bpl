(### "Queues: the members of a share group split a topic's records between")
(### "them, record by record, even those of a single partition, which a")
(### "consumer group cannot do: the shape of an IoT command queue or of a pool")
(### "of job workers. A worker acknowledges each record: accept, release (it")
(### "comes back, its delivery count one higher) or reject (it never comes")
(### "back). What a poll returned and was not acknowledged is accepted by the")
(### "worker's next poll or commit; a worker that dies gives it back.")

(kafka-create-topics kafka-servers "commands")
(### "A worker of the share group actuators. Its auto-offset-reset sets the")
(### "group's share.auto.offset.reset: read what the topic already holds.")
(set worker (function (name)
  (kafka-create "share-consumer" (list "servers" => kafka-servers "group" => "actuators"
    "topics" => "commands" "auto-offset-reset" => "earliest" "poll-format" => "records"
    "client-id" => name))))
(set p (kafka-create "producer" kafka-servers))
(kafka-send p "commands" ("valve-1" => "open" "valve-2" => "close" "pump-1" => "start" "lamp-9" => "blink"))

(### "Poll worker w until it gets records.")
(set take (function (w)
  (local got polls)
  (set got (list))
  (set polls 0)
  (while (and (= (size got) 0) (< polls 30))
    (set got (get (kafka-poll w 1000) "commands"))
    (set polls (+ polls 1)))
  got))

(set w1 (worker "w1"))
(size (set commands (take w1)))
(for-each commands r
  (print (get r "key") (get r "value") "delivery" (get r "delivery-count")))
(### "valve-1 is done; pump-1 is busy: release it, to try again; lamp-9 is")
(### "no known device: reject it. valve-2 is left to the commit, which")
(### "accepts it, and sends the acknowledgements.")
(for-each commands r
  (when (= (get r "key") "valve-1") (kafka-ack w1 r "accept"))
  (when (= (get r "key") "pump-1") (kafka-ack w1 r "release"))
  (when (= (get r "key") "lamp-9") (kafka-ack w1 r "reject")))
(kafka-commit w1)
(for-each (take w1) r
  (print (get r "key") (get r "value") "delivery" (get r "delivery-count")))
(kafka-commit w1)

(### "A second worker: the two share the next commands, each delivered once.")
(set w2 (worker "w2"))
(for-each (list "fan-1" "fan-2" "fan-3" "fan-4") fan
  (kafka-send p "commands" "on" "key" => fan))
(set done (list))
(set polls 0)
(while (and (< (size done) 4) (< polls 60))
  (for-each (list w1 w2) w
    (for-each (get (kafka-poll w 500) "commands") r (push done (get r "key")))
    (kafka-commit w))
  (set polls (+ polls 1))
  null)
(sort done)

(### "The group: a share group, both workers on the one partition, nothing")
(### "left to acknowledge.")
(do
  (set g (kafka-describe-group kafka-servers "actuators"))
  (print "type:" (get g "type") "members:" (size (get g "members")) "total-lag:" (get g "total-lag")))
(kafka-destroy w1)
(kafka-destroy w2)
(kafka-destroy p)
