package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
	pmdevice "github.com/braid-pm/braid/persist/device"
)

// media is where a store keeps its segments and its checkpoints: the
// device directories and CheckpointDir (fileMedia), or, in the crash
// tests, simulated regions and an in-memory directory. Keeping the store
// on this seam is what lets persist/crash simulate every segment.
type media interface {
	// device opens device i: takes its lock and returns it.
	device(i int) (deviceMedia, error)
	// checkpoints is the checkpoint directory.
	checkpoints() (fileDir, error)
}

// deviceMedia is one device: its identity file and its segments.
type deviceMedia interface {
	name() string
	// id returns the device's identity record, nil when the device holds
	// no store yet.
	id() ([]byte, error)
	setID(b []byte) error
	// segments maps the existing segments, in order.
	segments(size int64) ([]*persist.Region, error)
	// grow adds segments up to n (pre-allocated and pre-faulted).
	grow(n int, size int64) ([]*persist.Region, error)
	close() error
}

// fileDir is a directory of small files written atomically.
type fileDir interface {
	list() ([]string, error)
	read(name string) ([]byte, error)
	// write makes name hold b atomically: temp file, fsync, rename, fsync
	// of the directory.
	write(name string, b []byte) error
	remove(name string) error
}

// fileMedia is the real thing: one directory per device.
type fileMedia struct {
	c *config
}

func (m *fileMedia) device(i int) (deviceMedia, error) {
	dir := m.c.Devices[i]
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: device directory: %v", ErrInvalid, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: device %s is not a directory", ErrInvalid, dir)
	}
	lockPath := filepath.Join(dir, "LOCK")
	_, noLock := os.Stat(lockPath)
	lock, err := lockFile(lockPath, m.c.ReadOnly)
	if err != nil {
		return nil, err
	}
	emu, err := m.c.emulated(i)
	if err != nil {
		lock.Close()
		return nil, err
	}
	d := &fileDevice{dir: dir, lock: lock, pmem: m.c.PMem, emu: emu, ro: m.c.ReadOnly, faults: m.c.Faults, broken: m.c.broken, growHook: m.c.growHook}
	if noLock != nil {
		d.made = append(d.made, lockPath) // space.go
	}
	return d, nil
}

func (m *fileMedia) checkpoints() (fileDir, error) {
	if m.c.ReadOnly {
		return readOnlyCheckpoints(m.c.CheckpointDir)
	}
	if err := os.MkdirAll(m.c.CheckpointDir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: checkpoint directory: %v", ErrInvalid, err)
	}
	d := osDir(m.c.CheckpointDir)
	// A checkpoint directory that cannot be written fails at Open, not at
	// the first checkpoint.
	probe := ".kv-probe"
	if err := d.write(probe, nil); err != nil {
		return nil, fmt.Errorf("%w: checkpoint directory %s is not writable: %v", ErrInvalid, m.c.CheckpointDir, err)
	}
	_ = d.remove(probe)
	return d, nil
}

type fileDevice struct {
	dir     string
	lock    *os.File
	pmem    bool
	emu     *pmdevice.Device // the emulated device (Options.Emulate), nil for none
	ro      bool             // Options.ReadOnly: segments mapped read-only (readonly.go)
	faults  *persist.Faults  // Options.Faults, given to every segment mapped
	made    []string         // files this open created (space.go: removed if the creation fails)
	regions []*persist.Region
	// tests: the broken variant growInPlace and a hook at each step of
	// making a segment (the growth SIGKILL test).
	broken   broken
	growHook func(dir string, seg int, stage string) error
}

const idFile = "kv.id"

func (d *fileDevice) name() string { return d.dir }

func (d *fileDevice) id() ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(d.dir, idFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (d *fileDevice) setID(b []byte) error {
	d.made = append(d.made, filepath.Join(d.dir, idFile))
	return osDir(d.dir).write(idFile, b)
}

func segName(i int) string { return fmt.Sprintf("seg-%05d.kv", i) }

// mapSeg maps segment i, sparse: its blocks are allocated and faulted in
// window by window ahead of the log that uses it (grow.go), not here.
func (d *fileDevice) mapSeg(i int, size int64) (*persist.Region, error) {
	r, err := persist.Map(filepath.Join(d.dir, segName(i)), &persist.Options{Size: size, ForcePMem: d.pmem, NoPrefault: true, Sparse: true, ReadOnly: d.ro, Device: d.emu, Faults: d.faults})
	if err != nil {
		return nil, fullErr(fmt.Sprintf("device %s: segment %d", d.dir, i), err)
	}
	return r, nil
}

func (d *fileDevice) segments(size int64) ([]*persist.Region, error) {
	if !d.ro {
		d.removeTemps()
	}
	names, err := filepath.Glob(filepath.Join(d.dir, "seg-*.kv"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for i, n := range names {
		if filepath.Base(n) != segName(i) {
			return nil, fmt.Errorf("%w: device %s: segment files are not seg-00000.kv.. in sequence (found %s at %d)", ErrCorrupt, d.dir, filepath.Base(n), i)
		}
		st, err := os.Stat(n)
		if err != nil {
			return nil, err
		}
		if st.Size() != size {
			return nil, fmt.Errorf("%w: device %s: %s is %d bytes, the store's segments are %d", ErrBadFormat, d.dir, filepath.Base(n), st.Size(), size)
		}
		r, err := d.mapSeg(i, 0)
		if err != nil {
			return nil, err
		}
		d.regions = append(d.regions, r)
	}
	return d.regions, nil
}

// grow adds segments up to n. Each is made whole under a temporary name
// (created, sized, synced) and then renamed into the sequence, the
// directory synced: a crash in between leaves a temporary file, which
// the next Open removes (nothing was recorded in it), never a segment
// file cut short.
func (d *fileDevice) grow(n int, size int64) ([]*persist.Region, error) {
	for i := len(d.regions); i < n; i++ {
		path := filepath.Join(d.dir, segName(i))
		d.made = append(d.made, path)
		if err := d.makeSeg(i, path, size); err != nil {
			return d.regions, fullErr(fmt.Sprintf("device %s: segment %d", d.dir, i), err)
		}
		r, err := d.mapSeg(i, size)
		if err != nil {
			return d.regions, err
		}
		d.regions = append(d.regions, r)
	}
	return d.regions, nil
}

func segTemp(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
}

func (d *fileDevice) makeSeg(i int, path string, size int64) error {
	if d.broken.growInPlace {
		// The broken variant: made in place, a crash leaves it short.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		err = errors.Join(d.hook(i, "created"), f.Truncate(size), f.Sync(), f.Close())
		if err != nil {
			return err
		}
		return osDir(d.dir).syncDir()
	}
	tmp := segTemp(path)
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	err = errors.Join(f.Truncate(size), f.Sync(), f.Close())
	if err == nil {
		err = d.hook(i, "sized")
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return osDir(d.dir).syncDir()
}

// removeTemps removes the temporary files of segments whose making a
// crash cut short.
func (d *fileDevice) removeTemps() {
	tmps, _ := filepath.Glob(filepath.Join(d.dir, ".seg-*.kv.tmp"))
	for _, t := range tmps {
		_ = os.Remove(t)
	}
}

func (d *fileDevice) hook(seg int, stage string) error {
	if d.growHook != nil {
		return d.growHook(d.dir, seg, stage)
	}
	return nil
}

func (d *fileDevice) close() error {
	var errs []error
	for _, r := range d.regions {
		errs = append(errs, r.Close())
	}
	d.regions = nil
	if d.lock != nil {
		errs = append(errs, unlockFile(d.lock))
		d.lock = nil
	}
	return errors.Join(errs...)
}

// osDir is a fileDir on the file system.
type osDir string

func (d osDir) list() ([]string, error) {
	ents, err := os.ReadDir(string(d))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func (d osDir) read(name string) ([]byte, error) { return os.ReadFile(filepath.Join(string(d), name)) }

func (d osDir) write(name string, b []byte) error {
	f, err := os.CreateTemp(string(d), "."+name+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(string(d), name))
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return d.syncDir()
}

func (d osDir) syncDir() error {
	f, err := os.Open(string(d))
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

func (d osDir) remove(name string) error { return os.Remove(filepath.Join(string(d), name)) }

// Poisoned media. A read of a segment goes through persist's guard, so a
// poisoned range is an error wrapping persist.ErrMedia (naming the
// device, segment and offset), never a process death: a get of a key
// whose record lies there, the cleaner's move of it, and Check. The
// segment is then marked poisoned: never cleaned, freed, reused or
// continued. At Open, the ranges a region knows unreadable (Poison, a DAX
// device's badblocks) are skipped by recovery: a metadata entry there, or
// one whose value lies there, is not replayed and counted
// (RecoveryReport.MediaLost); a segment whose header is unreadable has
// lost its role (LostSegments) and its entries with it. Either way the
// key's previous version, if one is still on media, is what recovery
// finds: the entry that said which version is newest is gone, and so is
// the key it named.

// readCRC is the CRC-32C of b, a record of g, read under the guard.
func (s *Store) readCRC(g *segment, b []byte) (crc uint32, err error) {
	err = g.r.Guard(func() error {
		crc = persist.CRC32C(b)
		return nil
	})
	if err != nil {
		g.poisoned.Store(true)
	}
	return crc, err
}

// overlaps reports whether [off, off+n) meets one of bad.
func overlaps(bad []persist.Range, off, n int) bool {
	for _, r := range bad {
		if r.Overlaps(int64(off), int64(off+n)) {
			return true
		}
	}
	return false
}

// lostSegment: segment idx of device dev lost its header to poison, or
// to damage that zeroed it (zeroedHeader).
func (s *Store) lostSegment(dev, idx int) bool {
	d := s.devs[dev]
	if idx < 0 || idx >= len(d.segs) {
		return false
	}
	g := d.segs[idx]
	return g.headerLost.Load() || g.poisoned.Load() && overlaps(g.bad, 0, pmheader.Size)
}

// Zeroed headers. A segment the cleaner frees keeps its epoch in its
// header (only the magic is cleared), and one never used is zeros from
// end to end: an all-zero header line over a body that holds data, or
// named by a checkpoint or a marker, is damage, never a free segment. It
// is then kept out of every role (headerLost: not in the pool, never
// formatted again), counted (RecoveryReport.ZeroedHeaders), and the
// entries that name it stay in the index, so that their keys read
// ErrCorrupt (the segment is not a data segment of their epoch) and Check
// reports them, instead of reading as never written.

// zeroedHeader notes g's all-zero header line (blank) at Open and reports
// whether its body's first page shows it was in use (a metadata segment
// starts with a marker, a data segment with a record). A segment file
// this Open created is zeros (and blank: nothing may name it).
func zeroedHeader(g *segment) bool {
	if g.zeroed {
		// Created by this Open: a reference to it means its file was
		// lost (removed, then made again as zeros by the device's growth).
		g.blank = true
		return false
	}
	if !allZero(g.mem[:pmheader.Size]) {
		return false
	}
	g.blank = true
	if len(g.bad) == 0 && !allZero(g.mem[bodyOff:min(g.size, 4096)]) {
		g.headerLost.Store(true)
	}
	return g.headerLost.Load()
}

// zeroedRef returns segment idx of device dev when its header is zeros
// though a checkpoint or a marker names it (with an epoch: a header was
// committed before the reference was), and marks it lost; else nil.
func (s *Store) zeroedRef(dev, idx int) *segment {
	d := s.devs[dev]
	if idx < 0 || idx >= len(d.segs) || !d.segs[idx].blank {
		return nil
	}
	g := d.segs[idx]
	g.headerLost.Store(true)
	return g
}

// settleZeroed takes the segments found lost to a zeroed header out of
// the pools (recovery found some only while it read the references) and
// counts them and the index entries that name them.
func (s *Store) settleZeroed() {
	lost := map[*segment]bool{}
	for _, d := range s.devs {
		d.free = slices.DeleteFunc(d.free, func(i int) bool { return d.segs[i].headerLost.Load() })
		for _, g := range d.segs {
			if g.headerLost.Load() {
				lost[g] = true
			}
		}
	}
	s.rep.ZeroedHeaders = len(lost)
	if len(lost) == 0 {
		return
	}
	s.idx.each(func(_ []byte, l loc) {
		if int(l.dev) < len(s.devs) && int(l.seg) < len(s.devs[l.dev].segs) && lost[s.devs[l.dev].segs[l.seg]] {
			s.rep.DamagedKeys++
		}
	})
}

// fullIfPoisoned is where a worker continues log g that ends at end: a
// poisoned segment is taken as full, so that the first append switches
// to a new one (and the checkpoints keep the log's place).
func fullIfPoisoned(g *segment, end int) int {
	if g.poisoned.Load() {
		return g.size
	}
	return end
}

// resync finds the data segment of entry e, the first after an unreadable
// metadata range that may have held a marker: data when e's record checks
// there, else the data segment of the same worker, newer than data, where
// it does; data when none does (the entry then fails as it would).
func (s *Store) resync(ch *chain, data *segment, e *entry) *segment {
	holds := func(g *segment) bool {
		n := e.klen + int(e.vlen)
		if g == nil || g.poisoned.Load() || int(e.off) < bodyOff || int(e.off)+n > g.size {
			return false
		}
		crc, err := s.readCRC(g, g.mem[e.off:int(e.off)+n])
		return err == nil && crc == e.crc
	}
	if holds(data) {
		return data
	}
	var best *segment
	for _, g := range s.devs[ch.dev].segs {
		if g.kind == kindData && g.owner == ch.owner && (data == nil || g.epoch.Load() > data.epoch.Load()) &&
			(best == nil || g.epoch.Load() < best.epoch.Load()) && holds(g) {
			best = g
		}
	}
	if best == nil {
		return data
	}
	return best
}
