package kv

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/braid-pm/braid/persist"
)

// Expiry. A deadline is absolute Unix milliseconds, as Redis keeps it; a
// key with deadline d is there while the store's clock is at most d and
// gone after (Redis's rule). The deadline is part of the version: a
// record with one ends with it (layout.go), its metadata entry says so
// (the deadline bit) and its CRC covers it, so it is durable exactly when
// the put is, recovery replays it with the record, a checkpoint keeps it
// with the record it points to, and GC moves it with the value.
//
// An expired version is never returned: every read of a record with a
// deadline (Get, GetAt, TTL, Scan, a token get) checks it against the
// clock. It is then dropped: it becomes a tombstone with the same serial
// (a tombstone wins a serial tie: index.go), appended by the worker that
// owns its segment and switched in the index only if the version is still
// the latest, so the tombstone machinery reclaims it (GC drops the
// tombstone behind the checkpoints, as a deleted key's) and a write of
// the key that raced with it wins by its higher serial. Versions are
// dropped actively by the expirer, a goroutine that takes the due
// deadlines from a min-heap of every deadline written (each
// Options.ExpireInterval, and at once when a read found an expired
// version: lazily on access), and by GC, which moves an expired version
// as a tombstone instead of moving its value.
//
// The clock is Options.Clock (time.Now by default), made monotonic: the
// store never acts on a time earlier than one it has acted on since
// Open. A clock set back across a restart can make a version whose
// deadline had passed but that no read or drop had seen yet visible
// again until the clock passes its deadline anew; one that was read as
// expired or dropped stays gone.

// deadlineSize is the bytes a deadline adds to a record.
const deadlineSize = 8

// DefaultExpireInterval is how often the expirer looks for due deadlines.
const DefaultExpireInterval = 100 * time.Millisecond

// errRaced: a conditional put found the key changed since it was read.
var errRaced = errors.New("kv: key changed under a read-modify-write")

// maxRaces bounds the retries of Expire and Persist against writes of
// the same key.
const maxRaces = 100

func dlSize(dl uint64) int {
	if dl != 0 {
		return deadlineSize
	}
	return 0
}

// splitDeadline splits a record's value with a deadline into the value
// and the deadline.
func splitDeadline(v []byte) ([]byte, uint64) {
	n := len(v) - deadlineSize
	return v[:n:n], binary.LittleEndian.Uint64(v[n:])
}

// putDeadline writes dl into b and returns the record's CRC crc carried
// over it.
func (s *Store) putDeadline(b []byte, dl uint64, crc uint32) uint32 {
	binary.LittleEndian.PutUint64(b, dl)
	if s.broken.noDeadlineCRC {
		return crc
	}
	return persist.UpdateCRC32C(crc, b[:deadlineSize])
}

// crcLen is the bytes of a record of n bytes that its CRC covers: all of
// them, but in the broken variant noDeadlineCRC.
func (s *Store) crcLen(n int, ttl bool) int {
	if ttl && s.broken.noDeadlineCRC {
		return n - deadlineSize
	}
	return n
}

// checkOpDeadline refuses a batch operation's negative deadline.
func checkOpDeadline(dl uint64) error {
	if dl > math.MaxInt64 {
		return checkDeadline(int64(dl))
	}
	return nil
}

// checkDeadline refuses a deadline that is not a Unix time in ms.
func checkDeadline(deadline int64) error {
	if deadline <= 0 {
		return fmt.Errorf("%w: deadline %d: want Unix milliseconds, 1 to %d", ErrInvalid, deadline, int64(math.MaxInt64))
	}
	return nil
}

// Now is the store's clock in Unix milliseconds: what deadlines are
// compared with (a TTL is a deadline minus Now). It never goes back while
// the store is open.
func (s *Store) Now() int64 {
	var t int64
	if s.c.Clock != nil {
		t = s.c.Clock().UnixMilli()
	} else {
		t = time.Now().UnixMilli()
	}
	for {
		last := s.exp.last.Load()
		if t <= last {
			return last
		}
		if s.exp.last.CompareAndSwap(last, t) {
			return t
		}
	}
}

// expiredAt reports whether deadline dl has passed.
func (s *Store) expiredAt(dl uint64) bool { return int64(dl) < s.Now() }

// PutAt stores key = value with a deadline (Unix milliseconds; 0: none,
// as Put): durable, deadline included, when it returns nil. A deadline
// already past stores a version that is never returned (SET ... PXAT in
// the past).
func (s *Store) PutAt(key, value []byte, deadline int64) error {
	if deadline != 0 {
		if err := checkDeadline(deadline); err != nil {
			return err
		}
	}
	if err := s.checkKV(key, value); err != nil {
		return err
	}
	_, err := s.writeRetry(nil, opPut, key, value, uint64(deadline), nil)
	return err
}

// PutTTL stores key = value to expire ttl from now (at least 1 ms, rounded
// up to whole milliseconds).
func (s *Store) PutTTL(key, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("%w: TTL %v: want at least 1ms", ErrInvalid, ttl)
	}
	ms := (ttl + time.Millisecond - 1) / time.Millisecond
	return s.PutAt(key, value, satAdd(s.Now(), int64(ms)))
}

// satAdd is a + b, at most MaxInt64 (a and b not negative).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// PutAt adds a put of key = value with a deadline (Unix milliseconds; 0:
// none). Apply refuses a negative one.
func (b *Batch) PutAt(key, value []byte, deadline int64) {
	b.ops = append(b.ops, batchOp{key: b.copyIn(key), value: b.copyIn(value), dl: uint64(deadline)})
}

// GetAt returns a copy of key's value and its deadline (0: none), or
// ErrNotFound when the key is absent or expired.
func (s *Store) GetAt(key []byte) ([]byte, int64, error) {
	if err := s.checkKey(key); err != nil {
		return nil, 0, err
	}
	if err := s.enter(); err != nil {
		return nil, 0, err
	}
	defer s.ops.RUnlock()
	v, dl, _, err := s.getVersion(key)
	return v, dl, err
}

// TTL returns key's deadline (0: none), or ErrNotFound when the key is
// absent or expired.
func (s *Store) TTL(key []byte) (int64, error) {
	_, dl, err := s.GetAt(key)
	return dl, err
}

// getVersion reads key's latest version: its value, its deadline and its
// location.
func (s *Store) getVersion(key []byte) ([]byte, int64, loc, error) {
	for range maxRetries {
		l, ok := s.lookup(keyHash(key), key)
		if !ok || l.tomb() {
			return nil, 0, loc{}, ErrNotFound
		}
		v, dl, err, retry := s.readAt(opGet, key, keyHash(key), l, 0)
		if retry {
			continue // retired under the lookup
		}
		return v, int64(dl), l, err
	}
	return nil, 0, loc{}, fmt.Errorf("kv: get of a key moved by the cleaner %d times in a row", maxRetries)
}

// Expire gives key the deadline (Unix milliseconds) and reports whether
// the key was there; a deadline not after Now deletes it (Redis's EXPIRE
// with a time in the past). It is a read-modify-write: the value read is
// written again with the deadline, only if the index still holds the
// version read (else it reads again). It is atomic against other Expires
// and Persists of the key and against writes that completed before it
// began; a Put of the same key concurrent with it may be ordered before it
// and then be overwritten by the value it read (serialize the writes of a
// key that you mix with it).
func (s *Store) Expire(key []byte, deadline int64) (bool, error) {
	if err := checkDeadline(deadline); err != nil {
		return false, err
	}
	return s.rewrite(key, uint64(deadline), true)
}

// Persist removes key's deadline and reports whether it had one (false
// also when the key is absent). A read-modify-write, as Expire.
func (s *Store) Persist(key []byte) (bool, error) { return s.rewrite(key, 0, false) }

// rewrite writes key's value again with deadline dl (expire: Expire, else
// Persist, which writes nothing for a key without a deadline).
func (s *Store) rewrite(key []byte, dl uint64, expire bool) (bool, error) {
	if err := s.checkKey(key); err != nil {
		return false, err
	}
	for range maxRaces {
		if err := s.enter(); err != nil {
			return false, err
		}
		v, old, l, err := s.getVersion(key)
		s.ops.RUnlock()
		switch {
		case errors.Is(err, ErrNotFound):
			return false, nil
		case err != nil:
			return false, err
		case !expire && old == 0:
			return false, nil
		case expire && int64(dl) <= s.Now():
			// A blind delete: ordered by its serial, it needs no check.
			_, err := s.writeRetry(nil, opDel, key, nil, 0, nil)
			return err == nil, err
		}
		_, err = s.writeRetry(nil, opPut, key, v, dl, &l)
		if err != errRaced {
			return err == nil, err
		}
	}
	return false, fmt.Errorf("kv: %q changed under %d read-modify-writes in a row", key, maxRaces)
}

// holds reports whether l is key's latest version.
func (s *Store) holds(key []byte, l loc) bool {
	cur, ok := s.idx.lookup(key)
	return ok && cur == l
}

// expire (a worker's opExpire) turns the expired version r.l of r.key, on
// a segment this worker owns and its sender pinned, into a tombstone with
// its serial, if it is still the latest.
func (w *worker) expire(r *request) error {
	defer w.dev.segs[r.l.seg].unpin()
	if !w.s.holds(r.key, r.l) {
		return nil
	}
	key, val, err := w.s.record(r.l)
	if err != nil || !bytes.Equal(key, r.key) {
		return w.s.quarantine(r.l) // a damaged record stays: reads and Check report it (gc.go)
	}
	if _, dl := splitDeadline(val); !w.s.expiredAt(dl) {
		return nil
	}
	if err := w.append(r, r.key, nil, 0, r.l.serial, true); err != nil {
		return err
	}
	r.moved, r.expired = true, true
	return nil
}

// dlUpd is a deadline a worker wrote: its key (the caller's until the
// batch is acknowledged), the version's serial and the deadline.
type dlUpd struct {
	key    []byte
	serial uint64
	dl     uint64
}

// dlEnt is one deadline in the expirer's heap.
type dlEnt struct {
	dl, serial uint64
	key        string
}

type dlHeap []dlEnt

func (h dlHeap) Len() int           { return len(h) }
func (h dlHeap) Less(i, j int) bool { return h[i].dl < h[j].dl }
func (h dlHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dlHeap) Push(x any)        { *h = append(*h, x.(dlEnt)) }
func (h *dlHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// expiry is the expirer's state: every deadline written since Open (and
// those recovery found), the versions reads found expired, and the
// clock's high-water mark. A heap entry whose version is no longer the
// key's latest is dropped when it comes due, or when the heap is compacted.
type expiry struct {
	round  sync.Mutex // one expirer round at a time
	mu     sync.Mutex
	h      dlHeap
	recent []dlEnt // found expired by reads
	kick   chan struct{}
	last   atomic.Int64 // Now's high-water mark
}

const maxRecent = 4096

// add files the deadlines a batch wrote, once durable.
func (e *expiry) add(dls []dlUpd, durable bool) {
	if !durable {
		return
	}
	e.mu.Lock()
	for _, d := range dls {
		heap.Push(&e.h, dlEnt{dl: d.dl, serial: d.serial, key: string(d.key)})
	}
	e.mu.Unlock()
}

// lazy files a version a read found expired and wakes the expirer.
func (e *expiry) lazy(key []byte, serial, dl uint64) {
	e.mu.Lock()
	if len(e.recent) < maxRecent {
		e.recent = append(e.recent, dlEnt{dl: dl, serial: serial, key: string(key)})
	}
	e.mu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// due takes up to n entries whose deadline is before now.
func (e *expiry) due(now int64, n int) []dlEnt {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.recent
	e.recent = nil
	for len(out) < n && len(e.h) > 0 && int64(e.h[0].dl) < now {
		out = append(out, heap.Pop(&e.h).(dlEnt))
	}
	return out
}

// requeue files entries again (a drop that failed: tried next time).
func (e *expiry) requeue(ents []dlEnt) {
	e.mu.Lock()
	for _, d := range ents {
		heap.Push(&e.h, d)
	}
	e.mu.Unlock()
}

// expireBatch is how many due versions one round of the expirer drops.
const expireBatch = 1024

// expirer drops expired versions each ExpireInterval and when a read
// found one.
func (s *Store) expirer() {
	defer s.bg.Done()
	if s.broken.oneWriter {
		return // the crash tests drop versions themselves (expireAll)
	}
	var tick <-chan time.Time
	if s.c.ExpireInterval > 0 {
		t := time.NewTicker(s.c.ExpireInterval)
		defer t.Stop()
		tick = t.C
	}
	compactAt := 0
	for {
		select {
		case <-s.stop:
			return
		case <-tick:
		case <-s.exp.kick:
		}
		for {
			n, err := s.expireDue(expireBatch)
			if err != nil || n < expireBatch {
				break
			}
		}
		if compactAt++; compactAt >= 64 {
			compactAt = 0
			s.compactDeadlines()
		}
	}
}

// expireAll drops every version whose deadline has passed (the expirer's
// work, done now: tests) and returns how many it dropped.
func (s *Store) expireAll() (int, error) {
	total := 0
	for {
		n, dropped, err := s.expireRound(expireBatch)
		total += dropped
		if err != nil || n < expireBatch {
			return total, err
		}
	}
}

func (s *Store) expireDue(n int) (int, error) {
	taken, _, err := s.expireRound(n)
	return taken, err
}

// expireRound takes up to n due deadlines and drops the versions that are
// still the latest of their keys: the owner of each one's segment turns
// it into a tombstone. It returns the entries taken and the versions
// dropped.
func (s *Store) expireRound(n int) (taken, dropped int, err error) {
	s.exp.round.Lock()
	defer s.exp.round.Unlock()
	if err := s.enter(); err != nil {
		return 0, 0, err
	}
	defer s.ops.RUnlock()
	ents := s.exp.due(s.Now(), n)
	if len(ents) == 0 {
		return 0, 0, nil
	}
	s.drainMerge() // the tombstone is switched in the shards
	var reqs []*request
	var ws []*worker
	var sent []dlEnt
	var failed []dlEnt
	for _, d := range ents {
		key := []byte(d.key)
		l, ok := s.idx.lookup(key)
		if !ok || l.serial != d.serial || !l.ttl() || int(l.dev) >= len(s.devs) || int(l.seg) >= len(s.devs[l.dev].segs) {
			continue // overwritten, deleted or dropped since
		}
		g := s.devs[l.dev].segs[l.seg]
		if !g.pin(l.epoch) {
			failed = append(failed, d) // moved by GC meanwhile: next time
			continue
		}
		r := s.getReq()
		r.kind, r.key, r.l = opExpire, key, l
		w := s.owner(g)
		w.send(r)
		if s.broken.oneWriter {
			w.await(r)
			r.done <- struct{}{}
		}
		reqs = append(reqs, r)
		ws = append(ws, w)
		sent = append(sent, d)
	}
	for i, r := range reqs {
		ws[i].await(r)
		switch {
		case r.err != nil:
			if err == nil {
				err = r.err
			}
			failed = append(failed, sent[i])
		case r.moved:
			dropped++
		}
		s.putReq(r)
	}
	s.exp.requeue(failed)
	return len(ents), dropped, err
}

// compactDeadlines drops the heap entries of versions that are no longer
// their keys' latest, once they outnumber the keys with a deadline.
func (s *Store) compactDeadlines() {
	s.exp.mu.Lock()
	n := len(s.exp.h)
	s.exp.mu.Unlock()
	if n < 4096 || n < 2*s.idx.ttlCount() {
		return
	}
	s.exp.mu.Lock()
	defer s.exp.mu.Unlock()
	h := s.exp.h[:0]
	for _, d := range s.exp.h {
		if l, ok := s.idx.lookup([]byte(d.key)); ok && l.serial == d.serial && l.ttl() {
			h = append(h, d)
		}
	}
	clear(s.exp.h[len(h):])
	s.exp.h = h
	heap.Init(&s.exp.h)
}

// loadDeadlines fills the heap from the recovered index: the deadline of
// every latest version that has one, read from its record (it is checked
// again, with the record's CRC, when the version is dropped).
func (s *Store) loadDeadlines() {
	if s.idx.ttlCount() == 0 {
		return
	}
	s.idx.each(func(k []byte, l loc) {
		if !l.ttl() || l.valueLen() < deadlineSize {
			return
		}
		g := s.devs[l.dev].segs[l.seg]
		end := int(l.off) + int(l.klen) + l.valueLen()
		if g.kind != kindData || g.epoch.Load() != l.epoch || end > g.size || overlaps(g.bad, end-deadlineSize, deadlineSize) {
			return
		}
		var dl uint64
		if g.r.Guard(func() error { dl = binary.LittleEndian.Uint64(g.mem[end-deadlineSize : end]); return nil }) != nil {
			return
		}
		s.exp.h = append(s.exp.h, dlEnt{dl: dl, serial: l.serial, key: string(k)})
	})
	heap.Init(&s.exp.h)
}

// ttlCount is the number of index entries with a deadline.
func (x *index) ttlCount() int {
	n := 0
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.RLock()
		n += sh.t.ttls
		sh.mu.RUnlock()
	}
	return n
}
