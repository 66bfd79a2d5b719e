(do
  (### "A brain4it module that counts readings per sensor in a stream's store,")
  (### "run by several kafkabpl serve processes in one group: each holds part")
  (### "of the store's partitions, and @count answers any sensor through any")
  (### "of them (a key held by another process is forwarded to it).")
  (###   "kafkabpl serve --port 9999 --access-key K   (and again on 9998)")
  (###   "curl -H 'access-key: K' -X PUT localhost:9999/counts   (on both)")
  (###   "curl -H 'access-key: K' -H 'Content-Type: text/plain' --data-binary @examples/serve/counts.bpl localhost:9999/counts")
  (###   "curl -H 'access-key: K' -H 'Content-Type: text/plain' -d '(module-start)' localhost:9999/counts")
  (###   "curl -d '\"s1\"' localhost:9998/counts/@count")

  (set module-metadata ("description" => "Readings per sensor, answered by any process of the group"))
  (if (= kafka-servers null) (set kafka-servers "localhost:9092"))
  (set counts null)

  (### "@count: a sensor's count, null when it has none; wherever it is held.")
  (set @count (function (ctx sensor) (kafka-store-get counts sensor)))

  (set start (quote (do
    (set counts (kafka-stream (list "servers" => kafka-servers "group" => "sensor-counts" "session-timeout" => 6000)
      "from" => "readings" "to" => "readings-counted" "store" => "per-sensor"
      "transform" => (function (in n) (kafka-state (+ (if (= n null) 0 n) 1)))))
    "started")))
  (set stop (quote (do (kafka-destroy counts) "stopped")))
  "counts module defined")
