module github.com/braid-pm/braid/bench/fptreepeers

go 1.26.0

replace github.com/braid-pm/braid => ../..

require (
	github.com/braid-pm/braid v0.0.0-00010101000000-000000000000
	github.com/tidwall/btree v1.8.2
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
