package ycsb

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/kv"
)

// KV adapts a kv.Store to DB: the adapter of braid's own engine, used by
// pmkv bench and bench/kvpeers alike.
func KV(s *kv.Store) DB { return kvDB{s} }

type kvDB struct{ s *kv.Store }

func (d kvDB) Put(key, value []byte) error { return d.s.Put(key, value) }

func (d kvDB) Get(key []byte) ([]byte, error) {
	v, err := d.s.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, fmt.Errorf("%w (%w)", ErrNotFound, err)
	}
	return v, err
}

func (d kvDB) Delete(key []byte) error { return d.s.Delete(key) }

func (d kvDB) Scan(from []byte, n int, fn func(key, value []byte) bool) error {
	seen := 0
	err := d.s.Scan(from, nil, func(k, v []byte) bool {
		seen++
		return fn(k, v) && seen < n
	})
	if errors.Is(err, kv.ErrNoOrder) {
		return fmt.Errorf("%w (%w)", ErrNoScan, err)
	}
	return err
}

func (d kvDB) Close() error { return d.s.Close() }
