module github.com/brain4it/kafkabpl/bench/serve

go 1.26.0

replace github.com/brain4it/kafkabpl => ../..

require github.com/brain4it/kafkabpl v0.0.0-00010101000000-000000000000
