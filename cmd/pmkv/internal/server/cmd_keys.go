package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/match"
)

func init() {
	keyCmd("del", -2, fDel, 1, -1, 1, cmdDel)
	keyCmd("unlink", -2, []string{"write", "fast"}, 1, -1, 1, cmdDel)
	keyCmd("exists", -2, fRead, 1, -1, 1, cmdExists)
	keyCmd("touch", -2, fRead, 1, -1, 1, cmdExists)
	keyCmd("type", 2, fRead, 1, 1, 1, cmdType)
	keyCmd("rename", 3, fDel, 1, 2, 1, func(c *conn, t *tx, a [][]byte) { rename(c, t, a, false) })
	keyCmd("renamenx", 3, []string{"write", "fast"}, 1, 2, 1, func(c *conn, t *tx, a [][]byte) { rename(c, t, a, true) })
	keyCmd("copy", -3, fWrite, 1, 2, 1, cmdCopy)
	keyCmd("move", 3, []string{"write", "fast"}, 1, 1, 1, cmdMove)
	keyCmd("keys", 2, []string{"readonly"}, 0, 0, 0, cmdKeys)
	keyCmd("scan", -2, []string{"readonly"}, 0, 0, 0, cmdScan)
	keyCmd("randomkey", 1, []string{"readonly"}, 0, 0, 0, cmdRandomkey)
	keyCmd("dbsize", 1, fRead, 0, 0, 0, func(c *conn, _ *tx, _ [][]byte) { c.w.int(c.sv.b.Stats().Keys) })
	flush := func(c *conn, t *tx, a [][]byte) {
		if len(a) > 1 || (len(a) == 1 && !eq(a[0], "sync") && !eq(a[0], "async")) {
			c.w.err(errSyntax)
			return
		}
		for k := range t.over {
			t.over[k] = nil
		}
		t.flush = true
		t.prop.dirty++ // propagated even when nothing was there
		c.w.ok()
	}
	keyCmd("flushdb", -1, fDel, 0, 0, 0, flush).all = true
	keyCmd("flushall", -1, fDel, 0, 0, 0, flush).all = true
	for _, cmd := range []string{"flushdb", "flushall"} {
		table[cmd].write = true
	}
	connCmd("select", 2, fConn, cmdSelect)
	connCmd("swapdb", 3, []string{"write", "fast"}, func(c *conn, a [][]byte) {
		_, ok1 := parseInt(a[0])
		_, ok2 := parseInt(a[1])
		if !ok1 || !ok2 {
			c.w.err("ERR invalid first DB index")
			return
		}
		c.w.err("ERR DB index is out of range")
	})
}

func cmdDel(c *conn, t *tx, a [][]byte) {
	n := int64(0)
	for _, k := range a {
		ok, err := t.del(k)
		if err != nil {
			c.storeErr(err)
			return
		}
		if ok {
			n++
		}
	}
	c.w.int(n)
}

func cmdExists(c *conn, t *tx, a [][]byte) {
	n := int64(0)
	for _, k := range a {
		_, ok, fail := c.getRaw(t, k)
		if fail {
			return
		}
		if ok {
			n++
		}
	}
	c.w.int(n)
}

func cmdType(c *conn, t *tx, a [][]byte) {
	e, ok, fail := c.getRaw(t, a[0])
	switch {
	case fail:
	case ok:
		c.w.simple(TypeName(e.Value))
	default:
		c.w.simple("none")
	}
}

func rename(c *conn, t *tx, a [][]byte, nx bool) {
	e, ok, fail := c.getRaw(t, a[0])
	switch {
	case fail:
		return
	case !ok:
		c.w.err(errNoKey)
		return
	case string(a[0]) == string(a[1]):
		if nx {
			c.w.int(0)
		} else {
			c.w.ok()
		}
		return
	}
	if nx {
		_, exists, fail := c.getRaw(t, a[1])
		if fail {
			return
		}
		if exists {
			c.w.int(0)
			return
		}
	}
	t.set(a[0], nil)
	t.putRaw(a[1], e.Value, e.Deadline)
	if nx {
		c.w.int(1)
	} else {
		c.w.ok()
	}
}

func cmdCopy(c *conn, t *tx, a [][]byte) {
	replace := false
	for i := 2; i < len(a); i++ {
		switch {
		case eq(a[i], "replace"):
			replace = true
		case eq(a[i], "db") && i+1 < len(a):
			if db, ok := parseInt(a[i+1]); !ok {
				c.w.err(errNotInt)
				return
			} else if db != 0 {
				c.w.err("ERR DB index is out of range")
				return
			}
			i++
		default:
			c.w.err(errSyntax)
			return
		}
	}
	e, ok, fail := c.getRaw(t, a[0])
	if fail {
		return
	}
	if string(a[0]) == string(a[1]) {
		c.w.err("ERR source and destination objects are the same")
		return
	}
	if !ok {
		c.w.int(0)
		return
	}
	_, exists, fail := c.getRaw(t, a[1])
	if fail {
		return
	}
	if exists && !replace {
		c.w.int(0)
		return
	}
	t.putRaw(a[1], e.Value, e.Deadline)
	c.w.int(1)
}

func cmdMove(c *conn, _ *tx, a [][]byte) {
	if _, ok := parseInt(a[1]); !ok {
		c.w.err(errNotInt)
		return
	}
	c.w.err("ERR DB index is out of range")
}

func cmdSelect(c *conn, a [][]byte) {
	db, ok := parseInt(a[0])
	switch {
	case !ok:
		c.w.err(errNotInt)
	case db != 0:
		c.w.err("ERR DB index is out of range")
	default:
		c.w.ok()
	}
}

func cmdKeys(c *conn, t *tx, a [][]byte) {
	var keys [][]byte
	pat := string(a[0])
	err := c.sv.b.Scan(nil, func(k []byte) bool {
		if pat == "*" || match.Match(string(k), pat) {
			keys = append(keys, append([]byte(nil), k...))
		}
		return true
	})
	if err != nil {
		c.storeErr(err)
		return
	}
	c.w.array(len(keys))
	for _, k := range keys {
		c.w.bulk(k)
	}
}

func cmdRandomkey(c *conn, t *tx, _ [][]byte) {
	n := c.sv.b.Stats().Keys
	if n <= 0 {
		c.w.null()
		return
	}
	skip := rand.Int64N(n)
	var key []byte
	err := c.sv.b.Scan(nil, func(k []byte) bool {
		key = append(key[:0], k...)
		skip--
		return skip >= 0
	})
	switch {
	case err != nil:
		c.storeErr(err)
	case key == nil:
		c.w.null()
	default:
		c.w.bulk(key)
	}
}

// cursors are SCAN's: each number names the key after the last one
// returned, so that a full iteration returns every key present throughout
// it once, in key order (Redis's guarantee), whatever changes meanwhile.
// The table keeps the newest maxCursors; an older cursor is refused.
type cursors struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64][]byte
	fifo []uint64
}

const maxCursors = 4096

func (cs *cursors) put(from []byte) uint64 {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.next++
	id := cs.next
	cs.m[id] = from
	cs.fifo = append(cs.fifo, id)
	if len(cs.fifo) > maxCursors {
		delete(cs.m, cs.fifo[0])
		cs.fifo = cs.fifo[1:]
	}
	return id
}

func (cs *cursors) get(id uint64) ([]byte, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.m[id]
	return c, ok
}

// scanArgs are SCAN's options.
type scanArgs struct {
	from    []byte
	pattern string
	count   int
	typ     string // TYPE: only keys of this type ("": all)
}

func parseScan(c *conn, a [][]byte) (scanArgs, bool) {
	s := scanArgs{pattern: "*", count: 10}
	id, err := strconv.ParseUint(string(a[0]), 10, 64)
	if err != nil {
		c.w.err("ERR invalid cursor")
		return s, false
	}
	if id != 0 {
		from, ok := c.sv.cursors.get(id)
		if !ok {
			c.w.err("ERR invalid cursor (pmkv keeps the newest 4096 cursors)")
			return s, false
		}
		s.from = from
	}
	for i := 1; i < len(a); i += 2 {
		if i+1 >= len(a) {
			c.w.err(errSyntax)
			return s, false
		}
		switch {
		case eq(a[i], "match"):
			s.pattern = string(a[i+1])
		case eq(a[i], "count"):
			n, ok := parseInt(a[i+1])
			if !ok {
				c.w.err(errNotInt)
				return s, false
			}
			if n < 1 {
				c.w.err(errSyntax)
				return s, false
			}
			s.count = int(min(n, 100000))
		case eq(a[i], "type"):
			s.typ = strings.ToLower(string(a[i+1]))
		default:
			c.w.err(errSyntax)
			return s, false
		}
	}
	return s, true
}

func cmdScan(c *conn, t *tx, a [][]byte) {
	s, ok := parseScan(c, a)
	if !ok {
		return
	}
	var keys [][]byte
	var last []byte
	seen, more := 0, false
	err := c.sv.b.Scan(s.from, func(k []byte) bool {
		if seen == s.count {
			more = true
			return false
		}
		seen++
		last = append(last[:0], k...)
		if (s.pattern == "*" || match.Match(string(k), s.pattern)) && c.hasType(k, s.typ) {
			keys = append(keys, append([]byte(nil), k...))
		}
		return true
	})
	if err != nil {
		c.storeErr(err)
		return
	}
	next := uint64(0)
	if more {
		next = c.sv.cursors.put(append(last, 0)) // the smallest key after last
	}
	c.w.array(2)
	c.w.bulkString(strconv.FormatUint(next, 10))
	c.w.array(len(keys))
	for _, k := range keys {
		c.w.bulk(k)
	}
}
