// Package fptreepeers compares fptree with peers, in a module of its own
// so that braid's go.mod stays small and make test never downloads them:
// github.com/tidwall/btree (a DRAM B-tree: the speed a user gives up for
// persistence) and go.etcd.io/bbolt with durable puts (a B+-tree in a
// file, one fsync'ed transaction per put). Run it with make bench-fptree.
package fptreepeers
