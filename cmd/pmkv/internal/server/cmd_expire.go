package server

import (
	"math"
)

func init() {
	keyCmd("expire", -3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { expire(c, t, a, 1000, false, "expire") })
	keyCmd("pexpire", -3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { expire(c, t, a, 1, false, "pexpire") })
	keyCmd("expireat", -3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { expire(c, t, a, 1000, true, "expireat") })
	keyCmd("pexpireat", -3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { expire(c, t, a, 1, true, "pexpireat") })
	keyCmd("ttl", 2, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { ttl(c, t, a[0], false, false) })
	keyCmd("pttl", 2, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { ttl(c, t, a[0], true, false) })
	keyCmd("expiretime", 2, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { ttl(c, t, a[0], false, true) })
	keyCmd("pexpiretime", 2, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { ttl(c, t, a[0], true, true) })
	keyCmd("persist", 2, fWriteF, 1, 1, 1, cmdPersist)
}

// expireFlags are EXPIRE's conditions (Redis 7.0).
type expireFlags struct{ nx, xx, gt, lt bool }

func parseExpireFlags(c *conn, a [][]byte) (expireFlags, bool) {
	var f expireFlags
	for _, o := range a {
		switch {
		case eq(o, "nx"):
			f.nx = true
		case eq(o, "xx"):
			f.xx = true
		case eq(o, "gt"):
			f.gt = true
		case eq(o, "lt"):
			f.lt = true
		default:
			c.w.err("ERR Unsupported option " + string(o))
			return f, false
		}
	}
	switch {
	case f.nx && (f.xx || f.gt || f.lt):
		c.w.err("ERR NX and XX, GT or LT options at the same time are not compatible")
		return f, false
	case f.gt && f.lt:
		c.w.err("ERR GT and LT options at the same time are not compatible")
		return f, false
	}
	return f, true
}

func expire(c *conn, t *tx, a [][]byte, unit int64, abs bool, name string) {
	n, ok := parseInt(a[1])
	if !ok {
		c.w.err(errNotInt)
		return
	}
	f, ok := parseExpireFlags(c, a[2:])
	if !ok {
		return
	}
	bad := false
	if n > math.MaxInt64/unit || n < math.MinInt64/unit {
		bad = true
	} else {
		n *= unit
	}
	if !abs && !bad {
		if n > math.MaxInt64-t.now {
			bad = true
		} else {
			n += t.now
		}
	}
	if bad {
		c.w.err("ERR invalid expire time in '" + name + "' command")
		return
	}
	e, found, fail := c.getRaw(t, a[0])
	if fail {
		return
	}
	if !found {
		c.w.int(0)
		return
	}
	cur := e.Deadline
	switch {
	case f.nx && cur != 0, f.xx && cur == 0,
		f.gt && (cur == 0 || n <= cur), f.lt && cur != 0 && n >= cur:
		c.w.int(0)
		return
	}
	if n <= t.now {
		t.set(a[0], nil)
		t.propagate([]byte("DEL"), a[0])
	} else {
		t.putRaw(a[0], e.Value, n)
		t.propagate([]byte("PEXPIREAT"), a[0], msArg(n))
	}
	c.w.int(1)
}

func ttl(c *conn, t *tx, key []byte, ms, abs bool) {
	e, ok, fail := c.getRaw(t, key)
	switch {
	case fail:
	case !ok:
		c.w.int(-2)
	case e.Deadline == 0:
		c.w.int(-1)
	case abs && ms:
		c.w.int(e.Deadline)
	case abs:
		c.w.int(e.Deadline / 1000)
	case ms:
		c.w.int(max(e.Deadline-t.now, 0))
	default:
		c.w.int(max((e.Deadline-t.now+500)/1000, 0))
	}
}

func cmdPersist(c *conn, t *tx, a [][]byte) {
	e, ok, fail := c.getRaw(t, a[0])
	switch {
	case fail:
	case !ok || e.Deadline == 0:
		c.w.int(0)
	default:
		t.putRaw(a[0], e.Value, 0)
		c.w.int(1)
	}
}
