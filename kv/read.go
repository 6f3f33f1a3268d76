package kv

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// Reads. By default Get, GetWithToken and Scan read the record in the
// calling goroutine: look the key up, pin the data segment against the
// cleaner (segment.pin), check the record's key and CRC under the media
// guard (Store.record), copy the value, unpin. With Options.WorkerReads a
// read is sent to the worker that owns the data segment instead (SKYE's
// read path: two goroutine hand-offs per read). A device may bound its
// concurrent direct readers (Options.ReadersPerDevice, SKYE's R2).

// maxRetries bounds the lookups of a get racing with the cleaner.
const maxRetries = 1000

// readStripes spreads the direct reads' counter over cache lines (by key
// hash), so that concurrent gets do not contend on one atomic.
const readStripes = 16

type readCounter struct {
	n atomic.Uint64
	_ [56]byte
}

// Get returns a copy of key's value, or ErrNotFound. Its checksum is
// checked.
func (s *Store) Get(key []byte) ([]byte, error) {
	if err := s.checkKey(key); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.ops.RUnlock()
	return s.get(key)
}

func (s *Store) get(key []byte) ([]byte, error) {
	h := keyHash(key)
	for range maxRetries {
		l, ok := s.lookup(h, key)
		if !ok || l.tomb() {
			return nil, ErrNotFound
		}
		v, _, err, retry := s.readAt(opGet, key, h, l, 0)
		if !retry {
			return v, err
		}
	}
	return nil, fmt.Errorf("kv: get of a key moved by the cleaner %d times in a row", maxRetries)
}

// readAt reads key's record at l (h is key's hash): its value and
// deadline; retry when the segment was retired under the lookup, or for a
// token get when l is not key's latest version.
func (s *Store) readAt(kind opKind, key []byte, h uint64, l loc, hint uint32) (v []byte, dl uint64, err error, retry bool) {
	if s.c.WorkerReads {
		r := s.sendAt(kind, key, l, hint)
		if r == nil {
			return nil, 0, nil, true
		}
		return s.answer(r)
	}
	g := s.pinAt(l)
	if g == nil {
		return nil, 0, nil, true
	}
	v, dl, err, retry = s.readPinned(g, kind, key, h, l, hint, nil)
	g.unpin()
	return v, dl, err, retry
}

// pinAt pins l's data segment: nil when it does not exist, or was retired
// or reused since l was read from the index.
func (s *Store) pinAt(l loc) *segment {
	if int(l.dev) >= len(s.devs) || int(l.seg) >= len(s.devs[l.dev].segs) {
		return nil
	}
	g := s.devs[l.dev].segs[l.seg]
	if !g.pin(l.epoch) {
		return nil
	}
	return g
}

// readPinned reads the record at l of pinned segment g in the caller's
// goroutine and appends its value to dst.
func (s *Store) readPinned(g *segment, kind opKind, key []byte, h uint64, l loc, hint uint32, dst []byte) (v []byte, dl uint64, err error, miss bool) {
	sem := s.readers[g.dev.idx]
	if sem != nil {
		sem <- struct{}{}
	}
	val, dl, err, miss := s.readRecord(kind, key, l, hint)
	if err == nil && !miss {
		v = append(dst, val...)
		if v == nil {
			v = []byte{}
		}
	}
	if sem != nil {
		<-sem
	}
	s.reads[h%readStripes].n.Add(1)
	return v, dl, err, miss
}

// readRecord returns the value of key's record at l (whose segment the
// caller pinned) and its deadline (0: none), checked: the record holds
// key, its CRC holds, and for a token get l is still key's latest version
// (else miss). An expired value is ErrNotFound (and the expirer is asked
// to drop it). The value is the mapped segment's bytes: valid while the
// segment stays pinned.
func (s *Store) readRecord(kind opKind, key []byte, l loc, hint uint32) (val []byte, dl uint64, err error, miss bool) {
	k, val, err := s.record(l)
	switch {
	case err != nil:
		return nil, 0, err, false
	case !bytes.Equal(k, key):
		if kind == opTokenGet {
			return nil, 0, nil, true
		}
		return nil, 0, fmt.Errorf("%w: device %d segment %d offset %d holds another key than the index says", ErrCorrupt, l.dev, l.seg, l.off), false
	}
	if kind == opTokenGet && !s.idx.latest(key, keyHash(key), hint, l.serial) {
		return nil, 0, nil, true
	}
	if l.tomb() {
		return nil, 0, ErrNotFound, false
	}
	if l.ttl() {
		if val, dl = splitDeadline(val); s.expiredAt(dl) {
			s.exp.lazy(key, l.serial, dl)
			return nil, 0, ErrNotFound, false
		}
	}
	return val, dl, nil, false
}

// sendAt pins l's segment and sends the read of l to its worker without
// waiting (Options.WorkerReads); nil when the segment is gone or was
// retired under the lookup.
func (s *Store) sendAt(kind opKind, key []byte, l loc, hint uint32) *request {
	g := s.pinAt(l)
	if g == nil {
		return nil
	}
	r := s.getReq()
	r.kind, r.key, r.l, r.hint = kind, key, l, hint
	s.owner(g).send(r)
	return r
}

// answer waits for the read r and returns its value, its deadline, its
// error and whether it missed (a token get that must take the slow way).
func (s *Store) answer(r *request) (v []byte, dl uint64, err error, miss bool) {
	s.owner(s.devs[r.l.dev].segs[r.l.seg]).await(r)
	v, dl, err, miss = r.val, r.dl, r.err, r.miss
	s.putReq(r)
	return v, dl, err, miss
}

// GetWithToken is Get through the fast path: t (from PutToken or
// PutAsync) names the place to read, validated as Token says; a token
// that fails validation falls back to Get.
func (s *Store) GetWithToken(key []byte, t Token) ([]byte, error) {
	if err := s.checkKey(key); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.ops.RUnlock()
	if t.l.serial != 0 && int(t.l.klen) == len(key) {
		v, _, err, miss := s.readAt(opTokenGet, key, keyHash(key), t.l, t.hint)
		if !miss && err == nil {
			s.stats.tokenHits.Add(1)
			return v, nil
		}
	}
	s.stats.tokenMisses.Add(1)
	return s.get(key)
}

// Scan calls fn for every key in [from, to) in key order (to nil: no
// upper bound) with its value, until fn returns false. It needs
// Options.OrderedIndex (else ErrNoOrder). The slices passed to fn are
// valid only during the call. Keys written during the scan may or may
// not be seen; each value seen was the key's latest at a moment during
// the scan.
func (s *Store) Scan(from, to []byte, fn func(key, value []byte) bool) error {
	if s.idx.order == nil {
		return ErrNoOrder
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.ops.RUnlock()
	s.drainMerge()
	if s.c.WorkerReads {
		return s.scanWorkers(from, to, fn)
	}
	sc := scanner{s: s, fn: fn}
	s.idx.scanChunks(from, to, sc.chunk)
	return sc.err
}

// Prefetch distances of a direct scan, in keys: the index slot of the
// key slotAhead on is prefetched, the key lookAhead on is looked up and
// its record's first lines prefetched, so that the index's and the
// records' cache misses overlap the reads before them.
const (
	slotAhead = 8
	lookAhead = 4
)

// scanner streams a direct scan: keys in order from the ordered index,
// each read in the caller just before fn gets it, so that only the values
// fn is given are read.
type scanner struct {
	s    *Store
	fn   func(key, value []byte) bool
	err  error
	buf  []byte // the value passed to fn
	kbuf []byte // the key passed to fn
	hs   []uint64
	locs []loc
	ok   []bool
}

// chunk reads keys (a chunk of the ordered index) in order; false stops
// the scan.
func (sc *scanner) chunk(keys []string) bool {
	s := sc.s
	n := len(keys)
	if cap(sc.locs) < n {
		sc.locs, sc.ok = make([]loc, scanChunk), make([]bool, scanChunk)
	}
	sc.hs, sc.locs, sc.ok = sc.hs[:0], sc.locs[:n], sc.ok[:n]
	for _, k := range keys {
		sc.hs = append(sc.hs, keyHash(strBytes(k)))
	}
	for i := range min(slotAhead, n) {
		s.idx.prefetch(sc.hs[i])
	}
	for i := range min(lookAhead, n) {
		sc.look(keys, i)
	}
	for i, k := range keys {
		if j := i + slotAhead; j < n {
			s.idx.prefetch(sc.hs[j])
		}
		if j := i + lookAhead; j < n {
			sc.look(keys, j)
		}
		if !sc.ok[i] {
			continue
		}
		v, err := sc.read(strBytes(k), sc.hs[i], sc.locs[i])
		switch {
		case err == ErrNotFound:
			continue
		case err != nil:
			sc.err = err
			return false
		}
		sc.kbuf = append(sc.kbuf[:0], k...) // fn may not touch the index's copy
		if !sc.fn(sc.kbuf, v) {
			return false
		}
	}
	return true
}

// strBytes is k's bytes, for reading only (an ordered index key).
func strBytes(k string) []byte { return unsafe.Slice(unsafe.StringData(k), len(k)) }

// look finds keys[i]'s latest version and prefetches its record.
func (sc *scanner) look(keys []string, i int) {
	k := keys[i]
	l, ok := sc.s.idx.lookupHash(sc.hs[i], strBytes(k))
	sc.locs[i], sc.ok[i] = l, ok && !l.tomb()
	if !sc.ok[i] || int(l.dev) >= len(sc.s.devs) || int(l.seg) >= len(sc.s.devs[l.dev].segs) {
		return
	}
	g := sc.s.devs[l.dev].segs[l.seg]
	if n := int(l.klen) + l.valueLen(); int(l.off)+n <= len(g.mem) && n > 0 {
		asm.PrefetchLines(unsafe.Pointer(&g.mem[l.off]), min(4, (int(l.off)%64+n+63)/64))
	}
}

// read returns key's value at l (looked up a few keys ago), or through a
// get when l's segment was retired since. The value is in sc's buffer.
func (sc *scanner) read(key []byte, h uint64, l loc) ([]byte, error) {
	s := sc.s
	if g := s.pinAt(l); g != nil {
		v, _, err, _ := s.readPinned(g, opGet, key, h, l, 0, sc.buf[:0])
		g.unpin()
		if err == nil {
			sc.buf = v
		}
		return v, err
	}
	v, err := s.get(key)
	return v, err
}

// scanWorkers is Scan with Options.WorkerReads: a chunk's reads go to
// their workers at once, then are taken in key order: a worker serves the
// ones it holds in one batch, and the scan waits about once per chunk,
// not once per key.
func (s *Store) scanWorkers(from, to []byte, fn func(key, value []byte) bool) error {
	var err error
	reads := make([]scanRead, 0, scanChunk)
	s.idx.scanChunks(from, to, func(keys []string) bool {
		reads = reads[:0]
		for _, k := range keys {
			reads = append(reads, s.sendRead([]byte(k)))
		}
		more := true
		for i := range reads {
			rd := &reads[i]
			v, e := rd.wait(s)
			switch {
			case !more:
			case e == ErrNotFound:
			case e != nil:
				err, more = e, false
			default:
				more = fn(rd.key, v)
			}
		}
		return more
	})
	return err
}

// scanRead is one read of a worker scan: sent to its worker (r), or to be
// done by get when the key was not found or its segment was retired under
// the lookup.
type scanRead struct {
	key      []byte
	r        *request
	notFound bool
}

// sendRead looks key up and sends the read of its latest version to the
// worker that owns it, without waiting.
func (s *Store) sendRead(key []byte) scanRead {
	l, ok := s.idx.lookup(key)
	if !ok || l.tomb() {
		return scanRead{key: key, notFound: true}
	}
	return scanRead{key: key, r: s.sendAt(opGet, key, l, 0)}
}

// wait returns the read's value: the worker's answer, or get's.
func (rd *scanRead) wait(s *Store) ([]byte, error) {
	switch {
	case rd.notFound:
		return nil, ErrNotFound
	case rd.r == nil:
		return s.get(rd.key)
	}
	v, _, err, miss := s.answer(rd.r)
	rd.r = nil
	if miss {
		return s.get(rd.key)
	}
	return v, err
}
