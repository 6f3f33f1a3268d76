package kvpeers

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/internal/ycsb"
	"github.com/braid-pm/braid/kv"
)

// kvAdapter adapts a kv.Store to the YCSB driver's DB: braid's own engine
// beside the peers' adapters (the driver, below kv, does not import it).
func kvAdapter(s *kv.Store) ycsb.DB { return kvDB{s} }

type kvDB struct{ s *kv.Store }

func (d kvDB) Put(key, value []byte) error { return d.s.Put(key, value) }

func (d kvDB) Get(key []byte) ([]byte, error) {
	v, err := d.s.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, fmt.Errorf("%w (%w)", ycsb.ErrNotFound, err)
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
		return fmt.Errorf("%w (%w)", ycsb.ErrNoScan, err)
	}
	return err
}

func (d kvDB) Close() error { return d.s.Close() }
