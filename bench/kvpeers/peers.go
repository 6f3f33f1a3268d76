package kvpeers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	badger "github.com/dgraph-io/badger/v4"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
	bolt "go.etcd.io/bbolt"

	"github.com/braid-pm/braid/internal/ycsb"
	"github.com/braid-pm/braid/kv"
)

// Engines are the engines of the comparison, kv first.
var Engines = []string{"kv", "badger", "pebble", "bbolt", "goleveldb"}

// Options are what the comparison varies per engine.
type Options struct {
	// KVDeviceSize is the bytes kv pre-allocates per device (0: kv's
	// default); the comparison sizes it for its records.
	KVDeviceSize int64
	// KVWorkers is kv's workers per device (0: the profile's).
	KVWorkers int
	// KVSegmentSize is kv's segment size (0: kv's default).
	KVSegmentSize int64
	// KVExpectedKeys sizes kv's index for the load (kv.Options.ExpectedKeys).
	KVExpectedKeys int
}

// Open opens engine in dir (created when missing) in its durable mode.
func Open(engine, dir string, o Options) (ycsb.DB, ycsb.Info, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, ycsb.Info{}, err
	}
	info := ycsb.Info{Engine: engine, Device: dir}
	switch engine {
	case "kv":
		for _, d := range []string{"dev0", "ckpt"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				return nil, info, err
			}
		}
		s, err := kv.Open(&kv.Options{Devices: []string{filepath.Join(dir, "dev0")}, CheckpointDir: filepath.Join(dir, "ckpt"),
			OrderedIndex: true, PMem: true, DeviceSize: o.KVDeviceSize, SegmentSize: o.KVSegmentSize, WorkersPerDevice: o.KVWorkers,
			ExpectedKeys: o.KVExpectedKeys})
		if err != nil {
			return nil, info, err
		}
		info.Durability = "fence per batch, PMem path (tmpfs)"
		return kvAdapter(s), info, nil
	case "badger":
		db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil))
		if err != nil {
			return nil, info, err
		}
		info.Durability = "SyncWrites (fsync per commit)"
		return badgerDB{db}, info, nil
	case "pebble":
		db, err := pebble.Open(dir, &pebble.Options{Logger: quiet{}})
		if err != nil {
			return nil, info, err
		}
		info.Durability = "Sync on every write (WAL fsync)"
		return pebbleDB{db}, info, nil
	case "bbolt":
		db, err := bolt.Open(filepath.Join(dir, "bolt.db"), 0o644, &bolt.Options{NoSync: false})
		if err != nil {
			return nil, info, err
		}
		if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
			db.Close()
			return nil, info, err
		}
		info.Durability = "NoSync false (fdatasync per update txn)"
		return boltDB{db}, info, nil
	case "goleveldb":
		db, err := leveldb.OpenFile(dir, nil)
		if err != nil {
			return nil, info, err
		}
		info.Durability = "Sync true (fsync per write)"
		return levelDB{db}, info, nil
	}
	return nil, info, fmt.Errorf("unknown engine %q (want one of %v)", engine, Engines)
}

func notFound(err error) error { return fmt.Errorf("%w (%w)", ycsb.ErrNotFound, err) }

type badgerDB struct{ db *badger.DB }

func (d badgerDB) Put(k, v []byte) error {
	return d.db.Update(func(txn *badger.Txn) error { return txn.Set(slices.Clone(k), slices.Clone(v)) })
}

func (d badgerDB) Get(k []byte) (v []byte, err error) {
	err = d.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(k)
		if err != nil {
			return err
		}
		v, err = it.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, notFound(err)
	}
	return v, err
}

func (d badgerDB) Delete(k []byte) error {
	return d.db.Update(func(txn *badger.Txn) error { return txn.Delete(slices.Clone(k)) })
}

func (d badgerDB) Scan(from []byte, n int, fn func(k, v []byte) bool) error {
	return d.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: min(n, 100)})
		defer it.Close()
		i := 0
		for it.Seek(from); it.Valid() && i < n; it.Next() {
			item := it.Item()
			err := item.Value(func(v []byte) error {
				if !fn(item.Key(), v) {
					i = n
				}
				return nil
			})
			if err != nil {
				return err
			}
			i++
		}
		return nil
	})
}

func (d badgerDB) Close() error { return d.db.Close() }

// quiet drops pebble's informational log lines; errors still reach
// stderr.
type quiet struct{}

func (quiet) Infof(string, ...any) {}
func (quiet) Errorf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+f+"\n", a...)
}
func (quiet) Fatalf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+f+"\n", a...)
	os.Exit(1)
}

type pebbleDB struct{ db *pebble.DB }

func (d pebbleDB) Put(k, v []byte) error { return d.db.Set(k, v, pebble.Sync) }

func (d pebbleDB) Get(k []byte) ([]byte, error) {
	v, c, err := d.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, notFound(err)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return slices.Clone(v), nil
}

func (d pebbleDB) Delete(k []byte) error { return d.db.Delete(k, pebble.Sync) }

func (d pebbleDB) Scan(from []byte, n int, fn func(k, v []byte) bool) error {
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: from})
	if err != nil {
		return err
	}
	i := 0
	for ok := it.First(); ok && i < n; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		if !fn(it.Key(), v) {
			break
		}
		i++
	}
	return it.Close()
}

func (d pebbleDB) Close() error { return d.db.Close() }

var bucket = []byte("ycsb")

type boltDB struct{ db *bolt.DB }

func (d boltDB) Put(k, v []byte) error {
	return d.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put(k, v) })
}

func (d boltDB) Get(k []byte) (v []byte, err error) {
	err = d.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucket).Get(k); b != nil {
			v = slices.Clone(b)
		}
		return nil
	})
	if err == nil && v == nil {
		return nil, notFound(errors.New("bbolt: no such key"))
	}
	return v, err
}

func (d boltDB) Delete(k []byte) error {
	return d.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Delete(k) })
}

func (d boltDB) Scan(from []byte, n int, fn func(k, v []byte) bool) error {
	return d.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		i := 0
		for k, v := c.Seek(from); k != nil && i < n; k, v = c.Next() {
			if !fn(k, v) {
				break
			}
			i++
		}
		return nil
	})
}

func (d boltDB) Close() error { return d.db.Close() }

type levelDB struct{ db *leveldb.DB }

var syncWrite = &opt.WriteOptions{Sync: true}

func (d levelDB) Put(k, v []byte) error { return d.db.Put(k, v, syncWrite) }

func (d levelDB) Get(k []byte) ([]byte, error) {
	v, err := d.db.Get(k, nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, notFound(err)
	}
	return v, err
}

func (d levelDB) Delete(k []byte) error { return d.db.Delete(k, syncWrite) }

func (d levelDB) Scan(from []byte, n int, fn func(k, v []byte) bool) error {
	it := d.db.NewIterator(&util.Range{Start: from}, nil)
	defer it.Release()
	i := 0
	for ok := it.Seek(from); ok && i < n; ok = it.Next() {
		if !fn(it.Key(), it.Value()) {
			break
		}
		i++
	}
	return it.Error()
}

func (d levelDB) Close() error { return d.db.Close() }

// DiskBytes is the bytes allocated to the files under dir (what du says).
func DiskBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, err := e.Info(); err == nil {
				n += allocated(fi)
			}
		}
		return nil
	})
	return n
}
