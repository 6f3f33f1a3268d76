package server

import (
	"hash/maphash"
	"slices"
	"sync"
	"time"
)

// nStripes is the number of key locks. Every command that writes holds
// the locks of its keys from its first read to its write being durable,
// so a read-modify-write (INCR, SETNX, GETSET, RENAME, EXEC) is atomic
// against every other writer: commands on the same keys are serialized,
// commands on different keys run (and share batches) in parallel.
const nStripes = 4096

type stripe struct {
	mu sync.Mutex
	// watchers are the clients WATCHing keys of this stripe, by key.
	watchers map[string][]*conn
}

type locks struct {
	seed    maphash.Seed
	stripes [nStripes]stripe
}

func newLocks() *locks { return &locks{seed: maphash.MakeSeed()} }

func (l *locks) of(key []byte) int {
	return int(maphash.Bytes(l.seed, key) % nStripes)
}

// lockSet is a set of held stripes, locked in ascending order (so that
// two commands never wait for each other).
type lockSet []int

func (l *locks) lock(keys [][]byte, all bool) lockSet {
	var s lockSet
	if all {
		s = make(lockSet, nStripes)
		for i := range s {
			s[i] = i
		}
	} else {
		s = make(lockSet, 0, len(keys))
		for _, k := range keys {
			s = append(s, l.of(k))
		}
		slices.Sort(s)
		s = slices.Compact(s)
	}
	for _, i := range s {
		l.stripes[i].mu.Lock()
	}
	return s
}

func (l *locks) unlock(s lockSet) {
	for _, i := range s {
		l.stripes[i].mu.Unlock()
	}
}

// touch marks the clients watching key dirty; the caller holds key's stripe.
func (l *locks) touch(key string) {
	st := &l.stripes[l.of([]byte(key))]
	for _, c := range st.watchers[key] {
		c.dirty.Store(true)
	}
}

// touchAll marks every watcher of a key that exists dirty (FLUSHALL);
// the caller holds every stripe.
func (l *locks) touchAll(exists func(key string) bool) {
	for i := range l.stripes {
		for k, cs := range l.stripes[i].watchers {
			if exists(k) {
				for _, c := range cs {
					c.dirty.Store(true)
				}
			}
		}
	}
}

// watch registers c as a watcher of key.
func (l *locks) watch(c *conn, key []byte, deadline int64) {
	i := l.of(key)
	st := &l.stripes[i]
	st.mu.Lock()
	defer st.mu.Unlock()
	k := string(key)
	for _, w := range c.watched {
		if w.key == k {
			return
		}
	}
	if st.watchers == nil {
		st.watchers = map[string][]*conn{}
	}
	st.watchers[k] = append(st.watchers[k], c)
	c.watched = append(c.watched, watched{key: k, deadline: deadline})
}

// unwatch forgets every key c watches.
func (l *locks) unwatch(c *conn) {
	for _, w := range c.watched {
		st := &l.stripes[l.of([]byte(w.key))]
		st.mu.Lock()
		cs := slices.DeleteFunc(st.watchers[w.key], func(x *conn) bool { return x == c })
		if len(cs) == 0 {
			delete(st.watchers, w.key)
		} else {
			st.watchers[w.key] = cs
		}
		st.mu.Unlock()
	}
	c.watched = nil
	c.dirty.Store(false)
}

// watched is a WATCHed key and the deadline it had then: a key that
// expires between WATCH and EXEC counts as modified, as in Redis.
type watched struct {
	key      string
	deadline int64
}

func nowMs() int64 { return time.Now().UnixMilli() }
