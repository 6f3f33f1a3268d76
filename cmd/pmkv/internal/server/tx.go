package server

import (
	"errors"

	"github.com/braid-pm/braid/kv"
)

// tx is the view a run of commands has of the store: their writes go to
// an overlay (read back by the commands after them) and are committed
// together by one Apply, so that a pipeline's writes, or a MULTI's,
// share one batch and one fence, and their replies go out once durable.
// The run holds the locks of every key it touches (lock.go).
type tx struct {
	sv    *Server
	now   int64 // Unix ms, fixed for the run, as Redis fixes it per command
	over  map[string]*Entry
	order []string
	flush bool // FLUSHALL ran: every key not in over is gone
	prop  propagation
	// write: the run writes, so a Deferred Backend's reads skip their
	// own check; deferred: one did, and commit confirms if nothing is written.
	write, deferred bool
}

func (sv *Server) newTx() *tx {
	t := &tx{sv: sv, now: nowMs()}
	t.prop.on = sv.repl.n.Load() > 0
	return t
}

// get returns key's live entry.
func (t *tx) get(key []byte) (Entry, bool, error) {
	if e, ok := t.over[string(key)]; ok {
		if e == nil {
			return Entry{}, false, nil
		}
		return *e, true, nil
	}
	if t.flush {
		return Entry{}, false, nil
	}
	var e Entry
	var err error
	if d, ok := t.sv.b.(Deferred); ok && t.write {
		e, err = d.GetDeferred(key)
		t.deferred = true
	} else {
		e, err = t.sv.b.Get(key)
	}
	switch {
	case errors.Is(err, kv.ErrNotFound):
		return Entry{}, false, nil
	case err != nil:
		return Entry{}, false, err
	case e.Deadline != 0 && e.Deadline <= t.now:
		return Entry{}, false, nil
	}
	return e, true, nil
}

func (t *tx) set(key []byte, e *Entry) {
	t.prop.dirty++
	k := string(key)
	if t.over == nil {
		t.over = map[string]*Entry{}
	}
	if _, ok := t.over[k]; !ok {
		t.order = append(t.order, k)
	}
	t.over[k] = e
}

// put writes the string key = value with deadline (0: none).
func (t *tx) put(key, value []byte, deadline int64) {
	t.set(key, &Entry{Value: EncodeString(value), Deadline: deadline})
}

// putRaw writes a stored value (of any type, as getRaw returned it).
func (t *tx) putRaw(key, raw []byte, deadline int64) {
	t.set(key, &Entry{Value: raw, Deadline: deadline})
}

// del deletes key, reporting whether it was there.
func (t *tx) del(key []byte) (bool, error) {
	_, ok, err := t.get(key)
	if ok {
		t.set(key, nil)
	}
	return ok, err
}

// commit makes the overlay durable and touches the watched keys; the
// caller still holds the locks.
func (t *tx) commit() error {
	if len(t.order) == 0 && !t.flush {
		if t.deferred {
			return t.sv.b.(Deferred).Confirm()
		}
		return nil
	}
	ops := make([]Op, 0, len(t.order))
	if t.flush {
		l := t.sv.locks
		l.touchAll(func(k string) bool {
			_, err := t.sv.b.Get([]byte(k))
			return err == nil
		})
		err := t.sv.b.Scan(nil, func(k []byte) bool {
			if _, ok := t.over[string(k)]; !ok {
				ops = append(ops, Op{Key: append([]byte(nil), k...), Del: true})
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	for _, k := range t.order {
		e := t.over[k]
		if e == nil {
			ops = append(ops, Op{Key: []byte(k), Del: true})
		} else {
			ops = append(ops, Op{Key: []byte(k), Value: e.Value, Deadline: e.Deadline})
		}
	}
	if err := t.sv.b.Apply(ops); err != nil {
		return err
	}
	for _, k := range t.order {
		t.sv.locks.touch(k)
	}
	return nil
}
