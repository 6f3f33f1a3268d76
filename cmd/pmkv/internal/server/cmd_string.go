package server

import (
	"math"
	"math/big"
	"strconv"
)

func init() {
	keyCmd("get", 2, fRead, 1, 1, 1, cmdGet)
	keyCmd("set", -3, fWrite, 1, 1, 1, cmdSet)
	keyCmd("setnx", 3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { setCommon(c, t, a[0], a[1], setOpts{nx: true, intReply: true}) })
	keyCmd("setex", 4, fWrite, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { setex(c, t, a, 1000, "setex") })
	keyCmd("psetex", 4, fWrite, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { setex(c, t, a, 1, "psetex") })
	keyCmd("getset", 3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { setCommon(c, t, a[0], a[1], setOpts{get: true}) })
	keyCmd("getdel", 2, fWriteF, 1, 1, 1, cmdGetdel)
	keyCmd("getex", -2, fWriteF, 1, 1, 1, cmdGetex)
	keyCmd("mget", -2, fRead, 1, -1, 1, cmdMget)
	keyCmd("mset", -3, fWrite, 1, -1, 2, func(c *conn, t *tx, a [][]byte) { mset(c, t, a, false) })
	keyCmd("msetnx", -3, fWrite, 1, -1, 2, func(c *conn, t *tx, a [][]byte) { mset(c, t, a, true) })
	keyCmd("append", 3, fWrite, 1, 1, 1, cmdAppend)
	keyCmd("strlen", 2, fRead, 1, 1, 1, cmdStrlen)
	keyCmd("getrange", 4, fReadS, 1, 1, 1, cmdGetrange)
	keyCmd("substr", 4, fReadS, 1, 1, 1, cmdGetrange)
	keyCmd("setrange", 4, fWrite, 1, 1, 1, cmdSetrange)
	keyCmd("incr", 2, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { incrBy(c, t, a[0], 1) })
	keyCmd("decr", 2, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { incrBy(c, t, a[0], -1) })
	keyCmd("incrby", 3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { incrArg(c, t, a, 1) })
	keyCmd("decrby", 3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { incrArg(c, t, a, -1) })
	keyCmd("incrbyfloat", 3, fWriteF, 1, 1, 1, cmdIncrbyfloat)
}

func cmdGet(c *conn, t *tx, a [][]byte) {
	e, ok, fail := c.get(t, a[0])
	switch {
	case fail:
	case ok:
		c.sv.stats.hits.Add(1)
		c.w.bulk(e.Value)
	default:
		c.sv.stats.misses.Add(1)
		c.w.null()
	}
}

// setOpts are SET's options.
type setOpts struct {
	nx, xx, get, keepTTL, intReply bool
	deadline                       int64
}

func cmdSet(c *conn, t *tx, a [][]byte) {
	var o setOpts
	if !parseSetOpts(c, t, a[2:], &o) {
		return
	}
	setCommon(c, t, a[0], a[1], o)
}

func parseSetOpts(c *conn, t *tx, a [][]byte, o *setOpts) bool {
	expiry := false
	for i := 0; i < len(a); i++ {
		switch {
		case eq(a[i], "nx") && !o.xx:
			o.nx = true
		case eq(a[i], "xx") && !o.nx:
			o.xx = true
		case eq(a[i], "get"):
			o.get = true
		case eq(a[i], "keepttl") && !expiry:
			o.keepTTL, expiry = true, true
		case (eq(a[i], "ex") || eq(a[i], "px") || eq(a[i], "exat") || eq(a[i], "pxat")) && !expiry && i+1 < len(a):
			d, ok := deadlineArg(c, t, a[i], a[i+1], "set")
			if !ok {
				return false
			}
			o.deadline, expiry = d, true
			i++
		default:
			c.w.err(errSyntax)
			return false
		}
	}
	return true
}

// deadlineArg turns EX/PX/EXAT/PXAT n into an absolute deadline in ms.
func deadlineArg(c *conn, t *tx, unit, arg []byte, name string) (int64, bool) {
	n, ok := parseInt(arg)
	if !ok {
		c.w.err(errNotInt)
		return 0, false
	}
	bad := func() (int64, bool) {
		c.w.err("ERR invalid expire time in '" + name + "' command")
		return 0, false
	}
	if n <= 0 {
		return bad()
	}
	u := string(unit)
	if eq(unit, "ex") || eq(unit, "exat") {
		if n > math.MaxInt64/1000 {
			return bad()
		}
		n *= 1000
	}
	if len(u) == 2 { // relative
		if n > math.MaxInt64-t.now {
			return bad()
		}
		n += t.now
	}
	return n, true
}

func setCommon(c *conn, t *tx, key, value []byte, o setOpts) {
	old, ok, fail := c.getRaw(t, key) // SET replaces a value of any type
	if fail {
		return
	}
	if ok && o.get {
		s, str := DecodeString(old.Value)
		if !str {
			c.w.err(errWrongType)
			return
		}
		old.Value = s
	}
	if (o.nx && ok) || (o.xx && !ok) {
		switch {
		case o.intReply:
			c.w.int(0)
		case o.get && ok:
			c.w.bulk(old.Value)
		default:
			c.w.null()
		}
		return
	}
	d := o.deadline
	if o.keepTTL {
		d = old.Deadline
	}
	t.put(key, value, d)
	if o.deadline != 0 { // EX, PX, EXAT, PXAT: propagated as PXAT, as Redis 7.0.15
		t.propagate([]byte("SET"), key, value, []byte("PXAT"), msArg(d))
	}
	switch {
	case o.intReply:
		c.w.int(1)
	case o.get && ok:
		c.w.bulk(old.Value)
	case o.get:
		c.w.null()
	default:
		c.w.ok()
	}
}

func setex(c *conn, t *tx, a [][]byte, unit int64, name string) {
	n, ok := parseInt(a[1])
	if !ok {
		c.w.err(errNotInt)
		return
	}
	if n <= 0 || n > math.MaxInt64/unit || n*unit > math.MaxInt64-t.now {
		c.w.err("ERR invalid expire time in '" + name + "' command")
		return
	}
	t.put(a[0], a[2], t.now+n*unit)
	t.propagate([]byte("SET"), a[0], a[2], []byte("PXAT"), msArg(t.now+n*unit))
	c.w.ok()
}

func cmdGetdel(c *conn, t *tx, a [][]byte) {
	e, ok, fail := c.get(t, a[0])
	switch {
	case fail:
	case !ok:
		c.w.null()
	default:
		t.set(a[0], nil)
		t.propagate([]byte("DEL"), a[0])
		c.w.bulk(e.Value)
	}
}

func cmdGetex(c *conn, t *tx, a [][]byte) {
	d, persist, set := int64(0), false, false
	for i := 1; i < len(a); i++ {
		switch {
		case eq(a[i], "persist") && !set:
			persist, set = true, true
		case (eq(a[i], "ex") || eq(a[i], "px") || eq(a[i], "exat") || eq(a[i], "pxat")) && !set && i+1 < len(a):
			var ok bool
			if d, ok = deadlineArg(c, t, a[i], a[i+1], "getex"); !ok {
				return
			}
			set = true
			i++
		default:
			c.w.err(errSyntax)
			return
		}
	}
	e, ok, fail := c.get(t, a[0])
	switch {
	case fail:
		return
	case !ok:
		c.w.null()
		return
	case persist && e.Deadline != 0:
		t.put(a[0], e.Value, 0)
		t.propagate([]byte("PERSIST"), a[0])
	case d != 0 && d <= t.now:
		t.set(a[0], nil)
		t.propagate([]byte("DEL"), a[0])
	case d != 0:
		t.put(a[0], e.Value, d)
		t.propagate([]byte("PEXPIREAT"), a[0], msArg(d))
	}
	c.w.bulk(e.Value)
}

func cmdMget(c *conn, t *tx, a [][]byte) {
	c.w.array(len(a))
	for _, k := range a {
		e, ok, err := t.get(k)
		s, str := DecodeString(e.Value)
		if err != nil || !ok || !str {
			c.w.null() // Redis answers nil for what it cannot give
			continue
		}
		c.w.bulk(s)
	}
}

func mset(c *conn, t *tx, a [][]byte, nx bool) {
	if len(a)%2 != 0 {
		name := "mset"
		if nx {
			name = "msetnx"
		}
		c.w.err("ERR wrong number of arguments for '" + name + "' command")
		return
	}
	if nx {
		for i := 0; i < len(a); i += 2 {
			_, ok, fail := c.getRaw(t, a[i])
			if fail {
				return
			}
			if ok {
				c.w.int(0)
				return
			}
		}
	}
	for i := 0; i < len(a); i += 2 {
		t.put(a[i], a[i+1], 0)
	}
	if nx {
		c.w.int(1)
	} else {
		c.w.ok()
	}
}

func cmdAppend(c *conn, t *tx, a [][]byte) {
	e, ok, fail := c.get(t, a[0])
	if fail {
		return
	}
	if ok && !c.fits(int64(len(e.Value)+len(a[1]))) {
		return
	}
	v := make([]byte, 0, len(e.Value)+len(a[1]))
	v = append(append(v, e.Value...), a[1]...)
	t.put(a[0], v, e.Deadline)
	c.w.int(int64(len(v)))
}

func cmdStrlen(c *conn, t *tx, a [][]byte) {
	if e, _, fail := c.get(t, a[0]); !fail {
		c.w.int(int64(len(e.Value)))
	}
}

func cmdGetrange(c *conn, t *tx, a [][]byte) {
	start, ok1 := parseInt(a[1])
	end, ok2 := parseInt(a[2])
	if !ok1 || !ok2 {
		c.w.err(errNotInt)
		return
	}
	e, _, fail := c.get(t, a[0])
	if fail {
		return
	}
	n := int64(len(e.Value))
	if start < 0 && end < 0 && start > end {
		c.w.bulkString("")
		return
	}
	if start < 0 {
		start = max(n+start, 0)
	}
	if end < 0 {
		end = max(n+end, 0)
	}
	end = min(end, n-1)
	if start > end || n == 0 {
		c.w.bulkString("")
		return
	}
	c.w.bulk(e.Value[start : end+1])
}

func cmdSetrange(c *conn, t *tx, a [][]byte) {
	off, ok := parseInt(a[1])
	if !ok {
		c.w.err(errNotInt)
		return
	}
	if off < 0 {
		c.w.err("ERR offset is out of range")
		return
	}
	e, found, fail := c.get(t, a[0])
	if fail {
		return
	}
	if len(a[2]) == 0 {
		c.w.int(int64(len(e.Value)))
		return
	}
	end := off + int64(len(a[2]))
	if end < off {
		end = math.MaxInt64 // overflowed: too big
	}
	if !c.fits(end) {
		return
	}
	v := make([]byte, max(int64(len(e.Value)), off+int64(len(a[2]))))
	copy(v, e.Value)
	copy(v[off:], a[2])
	_ = found
	t.put(a[0], v, e.Deadline)
	c.w.int(int64(len(v)))
}

func incrArg(c *conn, t *tx, a [][]byte, sign int64) {
	n, ok := parseInt(a[1])
	if !ok {
		c.w.err(errNotInt)
		return
	}
	if sign < 0 {
		if n == math.MinInt64 {
			c.w.err("ERR decrement would overflow")
			return
		}
		n = -n
	}
	incrBy(c, t, a[0], n)
}

func incrBy(c *conn, t *tx, key []byte, by int64) {
	e, ok, fail := c.get(t, key)
	if fail {
		return
	}
	var n int64
	if ok {
		var good bool
		if n, good = parseInt(e.Value); !good {
			c.w.err(errNotInt)
			return
		}
	}
	if (by > 0 && n > math.MaxInt64-by) || (by < 0 && n < math.MinInt64-by) {
		c.w.err(errOverflow)
		return
	}
	n += by
	t.put(key, strconv.AppendInt(nil, n, 10), e.Deadline)
	c.w.int(n)
}

func cmdIncrbyfloat(c *conn, t *tx, a [][]byte) {
	by, ok := parseFloat(a[1])
	if !ok {
		c.w.err(errNotFloat)
		return
	}
	e, found, fail := c.get(t, a[0])
	if fail {
		return
	}
	cur := new(big.Float).SetPrec(longDouble)
	if found {
		if cur, ok = parseFloat(e.Value); !ok {
			c.w.err(errNotFloat)
			return
		}
	}
	if cur.IsInf() || by.IsInf() {
		c.w.err(errNaN)
		return
	}
	sum := new(big.Float).SetPrec(longDouble).Add(cur, by)
	if isInfOrBig(sum) {
		c.w.err(errNaN)
		return
	}
	s := formatLongDouble(sum)
	t.put(a[0], []byte(s), e.Deadline)
	t.propagate([]byte("SET"), a[0], []byte(s), []byte("KEEPTTL"))
	c.w.bulkString(s)
}
