package kv

import (
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// readerAnswer is what a read of one key gave.
type readerAnswer struct {
	val string
	dl  int64
	err string
}

func (a readerAnswer) String() string { return fmt.Sprintf("%q dl %d err %s", a.val, a.dl, a.err) }

type getAter interface {
	GetAt(key []byte) ([]byte, int64, error)
}

func readAll(g getAter, keys []string) map[string]readerAnswer {
	m := map[string]readerAnswer{}
	for _, k := range keys {
		v, dl, err := g.GetAt([]byte(k))
		a := readerAnswer{val: string(v), dl: dl}
		if err != nil {
			a.err = err.Error()
		}
		m[k] = a
	}
	return m
}

// compareReader opens the store of o both ways, read-only with its index
// built (Open) and as a Reader, and requires every key of keys to read
// the same (value, deadline, error, to the message), the opens to fail
// alike, and the two to have found the same checkpoint. It returns the
// answers (nil when the opens failed).
func compareReader(t *testing.T, o *Options, keys []string, what string) map[string]readerAnswer {
	t.Helper()
	ro := *o
	ro.ReadOnly = true
	full, err := Open(&ro)
	r, rerr := OpenReader(o)
	if err != nil {
		require.Error(t, rerr, "%s: Open failed (%v), OpenReader did not", what, err)
		require.Equal(t, err.Error(), rerr.Error(), what)
		return nil
	}
	require.NoError(t, rerr, what)
	defer func() { require.NoError(t, full.Close()); require.NoError(t, r.Close()) }()
	fr, rr := full.Recovery(), r.Recovery()
	require.Equal(t, fr.Checkpoint, rr.Checkpoint, what)
	require.Equal(t, fr.CheckpointKeys, rr.CheckpointKeys, what)
	require.Equal(t, fr.SkippedCheckpts, rr.SkippedCheckpts, what)
	want := readAll(full, keys)
	require.Equal(t, want, readAll(r, keys), what)
	for _, k := range keys { // Get is GetAt's value
		v, err := r.Get([]byte(k))
		if want[k].err != "" {
			require.EqualError(t, err, want[k].err, what)
		} else {
			require.NoError(t, err, what)
			require.Equal(t, want[k].val, string(v), what)
		}
	}
	return want
}

// TestReaderModel: random histories of puts, deletes, batches, puts with
// deadlines, checkpoints, GC passes, clean closes and kills; after each
// close or kill the store is read both ways (compareReader) and against
// a Go map, then read again with the newest checkpoint damaged (a flipped
// byte: both fall back to the one before it) and with a record damaged
// (both report the key ErrCorrupt), the damage undone before the history
// goes on.
func TestReaderModel(t *testing.T) {
	for i, v := range pathVariants {
		seed := uint64(3 + 5*i)
		t.Run(fmt.Sprintf("%s/%d", v.name, seed), func(t *testing.T) { readerModelRun(t, v, seed, 800) })
	}
}

type modelVal struct {
	v  string
	dl int64
}

func readerModelRun(t *testing.T, v pathVariant, seed uint64, n int) {
	rnd := structtest.NewRand(seed)
	t.Logf("seed %d", seed)
	var now atomic.Int64
	now.Store(1_000_000)
	o := v.apply(testOptions(t, 2))
	o.WorkersPerDevice = 1
	o.SegmentSize = 16 << 10
	o.DeviceSize = 24 * o.SegmentSize
	o.MergeLogs = seed%2 == 1
	o.ExpireInterval = -1
	o.Clock = func() time.Time { return time.UnixMilli(now.Load()) }
	s := mustOpen(t, o)
	defer func() { s.Close() }()
	model := map[string]modelVal{}
	var keys []string
	for i := range 200 {
		keys = append(keys, fmt.Sprintf("key%03d", i))
	}
	key := func() string { return keys[rnd.Intn(len(keys))] }
	val := func(i int) string { return fmt.Sprintf("v%d-%s", i, make([]byte, rnd.Intn(300))) }
	checks := 0
	check := func(i int) {
		what := fmt.Sprintf("op %d", i)
		got := compareReader(t, o, keys, what)
		for _, k := range keys {
			m, ok := model[k]
			if ok && m.dl != 0 && m.dl < now.Load() {
				ok = false // expired
			}
			if ok {
				require.Equal(t, readerAnswer{val: m.v, dl: m.dl}, got[k], "%s: key %s", what, k)
			} else {
				require.Equal(t, ErrNotFound.Error(), got[k].err, "%s: key %s", what, k)
			}
		}
		if checks++; checks%2 == 1 {
			readerDamaged(t, o, keys, got, rnd, what)
		}
	}
	for i := range n {
		switch op := rnd.Intn(100); {
		case op < 40:
			k, v := key(), val(i)
			require.NoError(t, s.Put([]byte(k), []byte(v)), "op %d", i)
			model[k] = modelVal{v: v}
		case op < 50:
			k := key()
			require.NoError(t, s.Delete([]byte(k)), "op %d", i)
			delete(model, k)
		case op < 58:
			k, v := key(), val(i)
			dl := now.Load() + int64(rnd.Intn(200)) - 20
			require.NoError(t, s.PutAt([]byte(k), []byte(v), dl), "op %d", i)
			model[k] = modelVal{v: v, dl: dl}
		case op < 63:
			var b Batch
			for j := range 1 + rnd.Intn(8) {
				k := key()
				if rnd.Intn(3) == 0 {
					b.Delete([]byte(k))
					delete(model, k)
				} else {
					v := val(i*10 + j)
					b.Put([]byte(k), []byte(v))
					model[k] = modelVal{v: v}
				}
			}
			require.NoError(t, s.Apply(&b), "op %d", i)
		case op < 88:
			now.Add(int64(rnd.Intn(10)))
		case op < 91:
			_, err := s.GC()
			require.NoError(t, err, "op %d", i)
		case op < 95:
			require.NoError(t, s.Checkpoint(), "op %d", i)
		case op < 98:
			require.NoError(t, s.Close(), "op %d", i)
			check(i)
			s = mustOpen(t, o)
		default:
			s.abandon() // a kill: no checkpoint
			check(i)
			s = mustOpen(t, o)
		}
	}
}

// readerDamaged reads the closed store of o both ways with its newest
// checkpoint damaged, then with a record of a key that reads a value
// damaged, and undoes each.
func readerDamaged(t *testing.T, o *Options, keys []string, good map[string]readerAnswer, rnd *structtest.Rand, what string) {
	t.Helper()
	cks, err := filepath.Glob(filepath.Join(o.CheckpointDir, ckptPrefix+"*"))
	require.NoError(t, err)
	if len(cks) > 0 {
		newest := cks[len(cks)-1]
		at := -1
		patchFile(t, newest, func(b []byte) { at = 64 + rnd.Intn(len(b)-64); b[at] ^= 0x10 })
		compareReader(t, o, keys, fmt.Sprintf("%s, %s byte %d flipped", what, filepath.Base(newest), at))
		patchFile(t, newest, func(b []byte) { b[at] ^= 0x10 })
	}
	var live []string
	for _, k := range keys {
		if good[k].err == "" {
			live = append(live, k)
		}
	}
	if len(live) == 0 {
		return
	}
	k := live[rnd.Intn(len(live))]
	ro := *o
	ro.ReadOnly = true
	s, err := Open(&ro)
	require.NoError(t, err)
	l, ok := s.lookup(keyHash([]byte(k)), []byte(k))
	require.NoError(t, s.Close())
	require.True(t, ok)
	path := segFile(o, int(l.dev), int(l.seg))
	off := int(l.off) + int(l.klen) // the value's first byte (values are never empty)
	patchFile(t, path, func(b []byte) { b[off] ^= 1 })
	got := compareReader(t, o, keys, fmt.Sprintf("%s, the record of %s damaged", what, k))
	// Read from the checkpoint's entry, the key is ErrCorrupt; replayed
	// from the tail, the record fails its check and is not filed (an
	// older version or none is read: RecoveryReport.CorruptValues).
	// Either way the damaged bytes are never its value.
	bad := []byte(good[k].val)
	bad[0] ^= 1
	require.NotEqual(t, string(bad), got[k].val, "%s: key %s read from a damaged record", what, k)
	patchFile(t, path, func(b []byte) { b[off] ^= 1 })
}

// TestReaderCrash: after every crash of the crash tests' workload (a
// checkpoint and a GC pass among its puts, deletes and batches), a Reader
// of the crash image reads every key as a read-only Open of it does.
// (TestCrash checks what the read-write recovery of such images reads.)
func TestReaderCrash(t *testing.T) {
	seed := uint64(4)
	ops := crashOps(seed, 60)
	m := &crashModel{}
	b := broken{unfencedMax: 3 * entrySize}
	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprintf("k%d", i))
	}
	images := 0
	rep := crash.Test(t, crashConfig(seed, 4), crashWorkload(ops, b, m), func(img *crash.Image) error {
		fs := m.disk.clone()
		o := crashOptions(img.Region, fs, b)
		o.ReadOnly = true
		full, err := Open(o)
		r, rerr := OpenReader(o)
		if (err == nil) != (rerr == nil) || err != nil && err.Error() != rerr.Error() {
			return fmt.Errorf("read-only Open: %v; OpenReader: %v", err, rerr)
		}
		if err == nil {
			want, got := readAll(full, keys), readAll(r, keys)
			full.Close()
			r.Close()
			if !maps.Equal(want, got) {
				return fmt.Errorf("read-only Open read %v, the Reader %v", want, got)
			}
		}
		images++
		return nil
	})
	require.Positive(t, images)
	t.Logf("%v; %d images read both ways", rep, images)
}

// TestReaderOldCheckpoint: a store whose checkpoint was written before
// the bucket directory (format 1) reads through a Reader as through Open:
// the whole checkpoint is its one bucket.
func TestReaderOldCheckpoint(t *testing.T) {
	o := testOptions(t, 1)
	s := mustOpen(t, o)
	var keys []string
	for i := range 300 {
		k := fmt.Sprintf("key%04d", i)
		keys = append(keys, k)
		require.NoError(t, s.Put([]byte(k), []byte("v"+k)))
	}
	require.NoError(t, s.Close())
	cks, err := filepath.Glob(filepath.Join(o.CheckpointDir, ckptPrefix+"*"))
	require.NoError(t, err)
	b, err := os.ReadFile(cks[len(cks)-1])
	require.NoError(t, err)
	v, err := decodeCheckpoint(b, 0)
	require.NoError(t, err)
	require.Positive(t, v.bits)
	require.NoError(t, os.WriteFile(cks[len(cks)-1], encodeFormat1(v.decoded(), binary.LittleEndian.Uint64(b[32:])), 0o644))
	got := compareReader(t, o, append(keys, "absent"), "format 1")
	for _, k := range keys {
		require.Equal(t, readerAnswer{val: "v" + k}, got[k])
	}
}

// encodeFormat1 encodes c as checkpoints were before the bucket
// directory: no flag, no bucket bits, no directory, the entries in order.
func encodeFormat1(c *checkpoint, storeID uint64) []byte {
	b := make([]byte, pmheader.Size+ckptFixed+len(c.chains)*chainSize)
	f := pmheader.Fields{Size: uint32(len(c.chains)), Stride: chainSize, Count: uint64(len(c.recs)), Aux: storeID}
	pmheader.Encode(b, &f)
	le := binary.LittleEndian
	le.PutUint64(b, ckptKind.Magic)
	p := b[pmheader.Size:]
	le.PutUint64(p, c.seq)
	le.PutUint64(p[8:], c.maxSerial)
	le.PutUint64(p[16:], c.floor)
	le.PutUint64(p[24:], c.lastEpoch)
	for i, ch := range c.chains {
		putChain(p[ckptFixed+i*chainSize:], ch)
	}
	for _, r := range c.recs {
		e := make([]byte, ckEntrySize+len(r.key))
		putCkEntry(e, r.key, r.l)
		b = append(b, e...)
	}
	return le.AppendUint32(b, persist.CRC32C(b[pmheader.Size:]))
}

// TestCheckpointDue: a checkpoint is due once the logs have grown by
// CheckpointBytes since the last one (counting the tail a recovery
// replayed), and by twice that checkpoint's size; an Open after a kill
// then replays only what followed the checkpoint.
func TestCheckpointDue(t *testing.T) {
	testNoCheckpointPoll.Store(true)
	defer testNoCheckpointPoll.Store(false)
	o := testOptions(t, 1)
	o.DeviceSize = 4 << 20
	o.CheckpointBytes = 8 << 10
	s := mustOpen(t, o)
	val := make([]byte, 100)
	n := 0
	putUntilDue := func() (puts int) {
		for !s.checkpointDue() {
			require.NoError(t, s.Put(fmt.Appendf(nil, "key%05d", n), val))
			n++
			puts++
			require.Less(t, puts, 10_000, "no checkpoint due")
		}
		return puts
	}
	// A new store: due after CheckpointBytes of log (136 B a put).
	// (Each put appends 136 B; a marker, 24 B, begins each segment.)
	within := func(puts int, bound int64) {
		t.Helper()
		require.GreaterOrEqual(t, int64(puts)*136, bound-2*entrySize, "due after %d puts", puts)
		require.Less(t, int64(puts-1)*136, bound, "due after %d puts", puts)
	}
	first := putUntilDue()
	within(first, o.CheckpointBytes)
	for range 500 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "key%05d", n), val))
		n++
	}
	first += 500
	require.NoError(t, s.Checkpoint())
	require.False(t, s.checkpointDue())
	size := s.ckBytes.Load()
	require.Greater(t, 2*size, o.CheckpointBytes, "twice the checkpoint is the larger bound")
	// Then after max(CheckpointBytes, twice the checkpoint) more.
	second := putUntilDue()
	within(second, max(o.CheckpointBytes, 2*size))
	tail := 50
	for range tail {
		require.NoError(t, s.Put(fmt.Appendf(nil, "key%05d", n), val))
		n++
	}
	s.abandon() // a kill: the tail is what followed the checkpoint
	s = mustOpen(t, o)
	defer s.Close()
	rep := s.Recovery()
	require.NotEmpty(t, rep.Checkpoint)
	require.Equal(t, int64(first), rep.CheckpointKeys)
	require.Equal(t, int64(second+tail), rep.Entries, "replayed only the tail")
	require.Equal(t, int64(n), rep.Keys)
	// The replayed tail counts toward the next checkpoint.
	require.Equal(t, rep.BytesScanned+rep.ValueBytes >= max(o.CheckpointBytes, 2*s.ckBytes.Load()), s.checkpointDue())
	for i := range n {
		_, err := s.Get(fmt.Appendf(nil, "key%05d", i))
		require.NoError(t, err)
	}
}
