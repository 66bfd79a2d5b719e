("device" => "boiler-17" "site" => "north-plant" "seq" => 123456789 "temperature" => 71.25
 "humidity" => 0.5 "ok" => true "at" => 1700000000123 "battery" => 87 "alarms" => ("overheat" "low-water") "note" => "checked")
