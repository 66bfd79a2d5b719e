(do
  (### "A brain4it module that shows the latest Kafka temperature on a dashboard.")
  (### "Run a server with an embedded cluster, then post this file into a module")
  (### "and start it:")
  (###   "kafkabpl serve --embedded --data-dir modules")
  (###   "curl -X PUT localhost:9999/temperature")
  (###   "curl -H 'Content-Type: text/plain' --data-binary @examples/serve/temperature.bpl localhost:9999/temperature")
  (###   "curl -H 'Content-Type: text/plain' -d '(module-start)' localhost:9999/temperature")
  (### "Open brain4it's manager on http://localhost:9999, module temperature, and send")
  (### "readings to the topic temperature (value 21.5, say). The server evaluates start")
  (### "again whenever it starts, with the module saved under --data-dir.")
  (### "The file is one expression, and uses brain4it's Kafka library only, so that")
  (### "brain4it's own server (which evaluates one expression a request) runs it too.")

  (set module-metadata ("icon" => "temperature" "description" => "The latest reading of the Kafka topic temperature"))

  (### "kafkabpl serve sets kafka-servers; brain4it's server leaves it to the module.")
  (if (= kafka-servers null) (set kafka-servers "localhost:9092"))

  (set temp null)
  (set readings 0)

  (### "Exterior functions: what the dashboards and any HTTP client may call.")
  (set @temp (function (ctx) temp))
  (set @readings (function (ctx) readings))
  (set @dashboards (function (ctx) dashboards))

  (set dashboards
    ("temperature" =>
      ("widgets" =>
        ("gauge" => ("type" => "gauge" "label" => "Temperature" "get-value" => @temp "min" => -10 "max" => 50)
         "count" => ("type" => "display" "get-value" => @readings))
       "layouts" => (("dimensions" => (4 5) "widgets" => (("gauge" 0 0 4 4) ("count" 0 4 4 1))))
       "polling-interval" => 0)))

  (### "start holds the code the server evaluates when it starts (and module-start):")
  (### "an executor polls the topic and tells the dashboards at once (module-notify)")
  (### "when a reading comes. It is code, not a function, which the server would")
  (### "not call.")
  (set start (quote (do
    (set consumer (kafka-consumer kafka-servers "group-id" => "temperature-dashboard" "auto-offset-reset" => "latest"))
    (kafka-subscribe consumer ("temperature"))
    (set poller (spawn
      (while true
        (for-each (kafka-poll consumer 1000) messages
          (for-each messages value
            (set temp (number value))
            (set readings (+ readings 1))
            (module-notify "@temp" "@readings"))))))
    "started")))

  (### "stop is evaluated at shutdown, module-stop and when the module is destroyed;")
  (### "the server kills its executors and destroys its Kafka handles after it anyway.")
  (set stop (quote (do
    (kill poller)
    (kafka-delete-app consumer)
    "stopped")))
  "temperature module defined")
