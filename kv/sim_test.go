package kv

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/braid-pm/braid/persist"
)

// simMedia puts a store on simulated regions (persist/crash): segment j
// of device i is the region "d<i>s<j>", and the identity files and
// checkpoints live in a memDir, whose writes are atomic like a rename
// after fsync.
type simMedia struct {
	devs, segs int
	region     func(name string) *persist.Region
	fs         *memDir
}

func (m *simMedia) count() int { return m.devs }

func (m *simMedia) device(i int) (deviceMedia, error) { return &simDevice{m: m, i: i}, nil }

func (m *simMedia) checkpoints() (fileDir, error) { return m.fs.sub("ckpt/"), nil }

type simDevice struct {
	m *simMedia
	i int
}

func (d *simDevice) name() string { return fmt.Sprintf("sim%d", d.i) }

func (d *simDevice) id() ([]byte, error) {
	b, err := d.m.fs.read(fmt.Sprintf("d%d/kv.id", d.i))
	if err != nil {
		return nil, nil
	}
	return b, nil
}

func (d *simDevice) setID(b []byte) error { return d.m.fs.write(fmt.Sprintf("d%d/kv.id", d.i), b) }

func (d *simDevice) segments(int64) ([]*persist.Region, error) {
	var rs []*persist.Region
	for j := range d.m.segs {
		rs = append(rs, d.m.region(segRegion(d.i, j)))
	}
	return rs, nil
}

func (d *simDevice) grow(int, int64) ([]*persist.Region, error) { return d.segments(0) }
func (d *simDevice) close() error                               { return nil }

func segRegion(dev, seg int) string { return fmt.Sprintf("d%ds%d", dev, seg) }

// memDir is an in-memory directory; onWrite runs after each write (a
// crash point at a checkpoint's rename).
type memDir struct {
	mu      *sync.Mutex
	files   map[string][]byte
	prefix  string
	onWrite func(name string)
}

func newMemDir() *memDir { return &memDir{mu: &sync.Mutex{}, files: map[string][]byte{}} }

func (d *memDir) sub(prefix string) *memDir {
	return &memDir{mu: d.mu, files: d.files, prefix: d.prefix + prefix, onWrite: d.onWrite}
}

// clone copies the whole directory tree (a crash image's disk).
func (d *memDir) clone() *memDir {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := newMemDir()
	for k, v := range d.files {
		c.files[k] = slices.Clone(v)
	}
	return c
}

func (d *memDir) list() ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(d.files)) {
		if len(k) > len(d.prefix) && k[:len(d.prefix)] == d.prefix {
			out = append(out, k[len(d.prefix):])
		}
	}
	return out, nil
}

func (d *memDir) read(name string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.files[d.prefix+name]
	if !ok {
		return nil, fmt.Errorf("%s: no such file", name)
	}
	return slices.Clone(b), nil
}

func (d *memDir) write(name string, b []byte) error {
	d.mu.Lock()
	d.files[d.prefix+name] = slices.Clone(b)
	d.mu.Unlock()
	if d.onWrite != nil {
		d.onWrite(d.prefix + name)
	}
	return nil
}

func (d *memDir) remove(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.files, d.prefix+name)
	return nil
}
