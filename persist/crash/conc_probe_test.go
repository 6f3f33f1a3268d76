package crash_test

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
)

// The concurrency probe: eight small structures written by several
// goroutines (Run.Go), each in a correct form and a broken twin with one
// bug of a class only a concurrent model can see. conc_test.go runs them.

// concCase is one structure of the probe: its workload and check, built
// fresh for each run, correct or broken.
type concCase struct {
	name  string
	class string // the bug of the broken twin
	build func(broken bool) (func(*crash.Run) error, func(*crash.Image) error)
}

const (
	probeSize = 4096
	line      = 64
)

// word is the 8 bytes at offset off of b.
func word(b []byte, off int) []byte { return b[off : off+8] }

// lineAt is the line at offset off of b.
func lineAt(b []byte, off int) []byte { return b[off : off+line] }

// spin is a lock in Go memory whose waiters spin with Run.Yield, so that
// the harness schedules them.
type spin struct{ held atomic.Bool }

func (l *spin) lock(w *crash.Run) {
	for !l.held.CompareAndSwap(false, true) {
		w.Yield()
	}
}

func (l *spin) unlock() { l.held.Store(false) }

// waitFor spins with Run.Yield until cond holds.
func waitFor(w *crash.Run, cond func() bool) {
	for !cond() {
		w.Yield()
	}
}

func mustPersist(r *persist.Region, b []byte) {
	if err := r.Persist(b); err != nil {
		panic(err)
	}
}

func mustFlush(r *persist.Region, b []byte) {
	if err := r.Flush(b); err != nil {
		panic(err)
	}
}

func mustDrain(r *persist.Region) {
	if err := r.Drain(); err != nil {
		panic(err)
	}
}

var concCases = []concCase{
	{"ownfence", "goroutine relies on another goroutine's fence (flushes, never fences, publishes)", ownFence},
	{"index", "index entry persisted before the record another goroutine wrote", indexRecord},
	{"lock", "lock released before the protected update is persisted", lockRelease},
	{"tail", "shared tail persisted by whichever goroutine finishes last", lastTail},
	{"neighbour", "ack after a Persist of a neighbour's word on the same line", neighbourAck},
	{"reader", "a reader returns a value that is not yet persisted (persistency race)", racyReader},
	{"group", "group commit: followers acknowledged before the leader's fence", groupCommit},
	{"reuse", "a slot freed to another goroutine before its deletion is persisted", reuseSlot},
}

// ownFence: two writers each write a record (value and its complement) in
// a line of their own, then a valid word. The broken one flushes both
// and never fences: it waits until the other writer has fenced, then
// acknowledges.
func ownFence(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	var acked [2]atomic.Bool
	wl := func(w *crash.Run) error {
		acked[0].Store(false)
		acked[1].Store(false)
		r := w.Region("r")
		b := r.Bytes()
		var fenced atomic.Int32
		for id := range 2 {
			w.Go(func() error {
				rec := 2 * line * id
				v := uint64(100 + id)
				persist.Store64(word(b, rec), v)
				persist.Store64(word(b, rec+8), ^v)
				mustFlush(r, lineAt(b, rec))
				if !broken {
					mustDrain(r)
				}
				persist.Store64(word(b, rec+line), 1)
				mustFlush(r, lineAt(b, rec+line))
				if !broken {
					mustDrain(r)
				} else {
					// The other writer's fence "covers" it.
					fenced.Add(1)
					waitFor(w, func() bool { return fenced.Load() == 2 })
					if id == 0 {
						mustDrain(r)
					}
				}
				acked[id].Store(true)
				w.Durable(fmt.Sprintf("record %d", id))
				return nil
			})
		}
		return nil
	}
	check := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		for id := range 2 {
			rec := 2 * line * id
			valid := persist.Load64(word(b, rec+line)) == 1
			v, c := persist.Load64(word(b, rec)), persist.Load64(word(b, rec+8))
			if valid && (v != uint64(100+id) || c != ^v) {
				return fmt.Errorf("record %d valid but holds %#x/%#x", id, v, c)
			}
			if acked[id].Load() && !valid {
				return fmt.Errorf("record %d acknowledged but not valid", id)
			}
		}
		return nil
	}
	return wl, check
}

// indexRecord: a writer fills records, an indexer publishes each with a
// persisted index entry once the writer says the record is ready. The
// broken writer says so before persisting the record.
func indexRecord(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	const n = 4
	wl := func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		var ready atomic.Int32
		w.Go(func() error {
			for i := range n {
				rec := line * (8 + i)
				persist.Store64(word(b, rec), uint64(1000+i))
				if broken {
					ready.Store(int32(i + 1))
				}
				mustPersist(r, word(b, rec))
				ready.Store(int32(i + 1))
			}
			return nil
		})
		w.Go(func() error {
			for i := range n {
				waitFor(w, func() bool { return ready.Load() > int32(i) })
				persist.Store64(word(b, 8*i), uint64(line*(8+i)))
				mustPersist(r, word(b, 8*i))
			}
			return nil
		})
		return nil
	}
	check := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		for i := range n {
			if off := persist.Load64(word(b, 8*i)); off != 0 {
				if v := persist.Load64(word(b, int(off))); v != uint64(1000+i) {
					return fmt.Errorf("index entry %d points to a record holding %d", i, v)
				}
			}
		}
		return nil
	}
	return wl, check
}

// lockRelease: a two-word state (a, b; a+b = 100) kept in one of two
// version slots, the current one named by a persisted word; threads
// transfer between a and b under a lock: write the other slot, persist
// it, switch the current word, persist it. The broken one releases the
// lock before the switch is persisted: the next thread then overwrites
// the slot the media still names as current.
func lockRelease(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	return lockReleaseWith(broken, false)
}

// lockReleaseWith is lockRelease; with mutex its lock is a sync.Mutex
// (threads block in Go's synchronization, and the harness notices).
func lockReleaseWith(broken, mutex bool) (func(*crash.Run) error, func(*crash.Image) error) {
	const threads, each = 3, 3
	slot := func(i uint64) int { return line * int(1+i) }
	wl := func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		persist.Store64(word(b, slot(0)), 100)
		mustPersist(r, lineAt(b, slot(0)))
		var sp spin
		var mx sync.Mutex
		lock, unlock := func() { sp.lock(w) }, sp.unlock
		if mutex {
			lock, unlock = mx.Lock, mx.Unlock
		}
		for range threads {
			w.Go(func() error {
				for range each {
					lock()
					cur := persist.Load64(word(b, 0))
					a, c := persist.Load64(word(b, slot(cur))), persist.Load64(word(b, slot(cur)+8))
					next := 1 - cur
					persist.Store64(word(b, slot(next)), a-1)
					persist.Store64(word(b, slot(next)+8), c+1)
					mustPersist(r, lineAt(b, slot(next)))
					persist.Store64(word(b, 0), next)
					if broken {
						unlock()
					}
					mustPersist(r, word(b, 0))
					if !broken {
						unlock()
					}
				}
				return nil
			})
		}
		return nil
	}
	check := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		cur := persist.Load64(word(b, 0))
		if cur > 1 {
			return fmt.Errorf("current slot %d", cur)
		}
		a, c := persist.Load64(word(b, slot(cur))), persist.Load64(word(b, slot(cur)+8))
		if a+c != 100 && !(cur == 0 && a == 0 && c == 0) { // (0, 0): not created yet
			return fmt.Errorf("slot %d holds %d + %d", cur, a, c)
		}
		return nil
	}
	return wl, check
}

// lastTail: writers take slots, write their entries; the one that
// finishes last persists the tail (how many entries). The broken writers
// count themselves finished before persisting their entries.
func lastTail(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	const threads = 3
	var ackedTail atomic.Int64
	wl := func(w *crash.Run) error {
		ackedTail.Store(0)
		r := w.Region("r")
		b := r.Bytes()
		var next, done atomic.Int32
		for range threads {
			w.Go(func() error {
				i := int(next.Add(1)) - 1
				e := line * (1 + i)
				persist.Store64(word(b, e), uint64(500+i))
				if !broken {
					mustPersist(r, word(b, e))
				}
				last := done.Add(1) == threads
				if broken {
					mustPersist(r, word(b, e))
				}
				if last {
					persist.Store64(word(b, 0), threads)
					mustPersist(r, word(b, 0))
					ackedTail.Store(threads)
				}
				return nil
			})
		}
		return nil
	}
	check := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		t := int(persist.Load64(word(b, 0)))
		for i := range t {
			if v := persist.Load64(word(b, line*(1+i))); v != uint64(500+i) {
				return fmt.Errorf("tail %d but entry %d holds %d", t, i, v)
			}
		}
		if int64(t) < ackedTail.Load() {
			return fmt.Errorf("tail %d, %d acknowledged", t, ackedTail.Load())
		}
		return nil
	}
	return wl, check
}

// neighbourAck: two threads own a word each of one line; A stores its
// word and, broken, acknowledges once B has persisted B's word (the same
// line) after A's store began, instead of persisting its own.
func neighbourAck(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	const rounds, bRounds = 3, 6
	var acked atomic.Uint64
	wl := func(w *crash.Run) error {
		acked.Store(0)
		r := w.Region("r")
		b := r.Bytes()
		var persisted atomic.Int32
		w.Go(func() error { // B
			for k := range bRounds {
				persist.Store64(word(b, 8), uint64(k+1))
				mustPersist(r, word(b, 8))
				persisted.Add(1)
			}
			return nil
		})
		w.Go(func() error { // A
			for k := uint64(1); k <= rounds; k++ {
				persist.Store64(word(b, 0), k)
				if broken {
					c0 := persisted.Load()
					waitFor(w, func() bool { return persisted.Load() > c0 || persisted.Load() == bRounds })
				} else {
					mustPersist(r, word(b, 0))
				}
				acked.Store(k)
				w.Durable(fmt.Sprintf("A %d", k))
			}
			return nil
		})
		return nil
	}
	check := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		if v := persist.Load64(word(b, 0)); v < acked.Load() {
			return fmt.Errorf("A acknowledged %d, found %d", acked.Load(), v)
		}
		return nil
	}
	return wl, check
}

// racyReader: a writer updates a word and persists it; a reader returns
// what it reads to its client. The broken reader acknowledges the value
// without making it durable first (the correct one persists what it read,
// as durable linearizability asks of readers).
func racyReader(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	var seen atomic.Uint64
	wl := func(w *crash.Run) error {
		seen.Store(0)
		r := w.Region("r")
		b := r.Bytes()
		w.Go(func() error {
			for v := uint64(1); v <= 3; v++ {
				persist.Store64(word(b, 0), v)
				mustPersist(r, word(b, 0))
			}
			return nil
		})
		w.Go(func() error {
			for range 3 {
				v := persist.Load64(word(b, 0))
				if !broken {
					mustPersist(r, word(b, 0))
				}
				seen.Store(max(seen.Load(), v))
				w.Durable(fmt.Sprintf("read %d", v))
			}
			return nil
		})
		return nil
	}
	check := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		if v := persist.Load64(word(b, 0)); v < seen.Load() {
			return fmt.Errorf("a reader returned %d, the word holds %d", seen.Load(), v)
		}
		return nil
	}
	return wl, check
}

// groupCommit: followers write records and wait; a leader flushes them
// all and fences once for the group. The broken leader releases the
// followers between its flushes and its fence.
func groupCommit(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	const followers = 2
	var acked [followers]atomic.Bool
	wl := func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		var written atomic.Int32
		var committed atomic.Bool
		for id := range followers {
			acked[id].Store(false)
			w.Go(func() error {
				persist.Store64(word(b, line*(1+id)), uint64(7+id))
				written.Add(1)
				waitFor(w, committed.Load)
				acked[id].Store(true)
				w.Durable(fmt.Sprintf("follower %d", id))
				return nil
			})
		}
		w.Go(func() error { // leader
			waitFor(w, func() bool { return written.Load() == followers })
			for id := range followers {
				mustFlush(r, word(b, line*(1+id)))
			}
			if broken {
				committed.Store(true)
			}
			mustDrain(r)
			committed.Store(true)
			return nil
		})
		return nil
	}
	check := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		for id := range followers {
			if acked[id].Load() && persist.Load64(word(b, line*(1+id))) != uint64(7+id) {
				return fmt.Errorf("follower %d acknowledged, its record lost", id)
			}
		}
		return nil
	}
	return wl, check
}

// reuseSlot: slots of (value, key) with key 0 for free. A deletes its key
// from slot 0 and hands the slot to B (a free list in Go memory); B
// writes a new value, persists it, then its key. The broken A hands the
// slot over before its deletion is persisted.
func reuseSlot(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	val := func(key uint64) uint64 { return key*1000 + 1 }
	wl := func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		slot := line
		persist.Store64(word(b, slot), val(1))
		mustPersist(r, word(b, slot))
		persist.Store64(word(b, slot+8), 1)
		mustPersist(r, word(b, slot+8))
		var free atomic.Bool
		w.Go(func() error { // A deletes key 1
			persist.Store64(word(b, slot+8), 0)
			if broken {
				free.Store(true)
			}
			mustPersist(r, word(b, slot+8))
			free.Store(true)
			return nil
		})
		w.Go(func() error { // B reuses the slot for key 2
			waitFor(w, free.Load)
			persist.Store64(word(b, slot), val(2))
			mustPersist(r, word(b, slot))
			persist.Store64(word(b, slot+8), 2)
			mustPersist(r, word(b, slot+8))
			return nil
		})
		return nil
	}
	check := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		v, k := persist.Load64(word(b, line)), persist.Load64(word(b, line+8))
		if k != 0 && v != val(k) {
			return fmt.Errorf("key %d holds value %d", k, v)
		}
		return nil
	}
	return wl, check
}
