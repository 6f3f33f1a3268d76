package server

import (
	"strconv"
)

// Sets: one kv value per set (types.go), members in insertion order.

func init() {
	keyCmd("sadd", -3, fWriteF, 1, 1, 1, cmdSadd)
	keyCmd("srem", -3, fWriteF, 1, 1, 1, cmdSrem)
	keyCmd("smembers", 2, fReadS, 1, 1, 1, cmdSmembers)
	keyCmd("sismember", 3, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { sismember(c, t, a, false) })
	keyCmd("smismember", -3, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { sismember(c, t, a, true) })
	keyCmd("scard", 2, fRead, 1, 1, 1, cmdScard)
	keyCmd("spop", -2, fWriteF, 1, 1, 1, cmdSpop)
	keyCmd("srandmember", -2, fReadS, 1, 1, 1, cmdSrandmember)
	keyCmd("smove", 4, fWriteF, 1, 2, 1, cmdSmove)
	for _, op := range []string{"sinter", "sunion", "sdiff"} {
		keyCmd(op, -2, fReadS, 1, -1, 1, func(c *conn, t *tx, a [][]byte) { setAlgebra(c, t, op, a, nil) })
		keyCmd(op+"store", -3, fWrite, 1, -1, 1, func(c *conn, t *tx, a [][]byte) { setAlgebra(c, t, op, a[1:], a[0]) })
	}
	keyCmd("sintercard", -3, fReadS, 2, -1, 1, cmdSintercard)
	keyCmd("sscan", -3, fReadS, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { collScan(c, t, a, kindSet) })
}

func cmdSadd(c *conn, t *tx, a [][]byte) {
	s, dl, fail := c.getDict(t, a[0], kindSet)
	if fail {
		return
	}
	added := int64(0)
	for _, m := range a[1:] {
		if s.set(string(m), nil) {
			added++
		}
	}
	if added > 0 && !c.putDict(t, a[0], s, kindSet, dl) {
		return
	}
	c.w.int(added)
}

func cmdSrem(c *conn, t *tx, a [][]byte) {
	s, dl, fail := c.getDict(t, a[0], kindSet)
	if fail {
		return
	}
	ms := make([]string, len(a)-1)
	for i, m := range a[1:] {
		ms[i] = string(m)
	}
	n := s.del(ms...)
	if n > 0 && !c.putDict(t, a[0], s, kindSet, dl) {
		return
	}
	c.w.int(int64(n))
}

// members writes the members of s as a set reply.
func (w *writer) members(keys []string) {
	w.setHeader(len(keys))
	for _, k := range keys {
		w.bulkString(k)
	}
}

func cmdSmembers(c *conn, t *tx, a [][]byte) {
	if s, _, fail := c.getDict(t, a[0], kindSet); !fail {
		c.w.members(s.keys)
	}
}

func sismember(c *conn, t *tx, a [][]byte, multi bool) {
	s, _, fail := c.getDict(t, a[0], kindSet)
	if fail {
		return
	}
	if multi {
		c.w.array(len(a) - 1)
	}
	for _, m := range a[1:] {
		if _, ok := s.idx[string(m)]; ok {
			c.w.int(1)
		} else {
			c.w.int(0)
		}
	}
}

func cmdScard(c *conn, t *tx, a [][]byte) {
	if s, _, fail := c.getDict(t, a[0], kindSet); !fail {
		c.w.int(int64(s.len()))
	}
}

func cmdSpop(c *conn, t *tx, a [][]byte) {
	n, withCount, ok := c.popCount(a, errSyntax)
	if !ok {
		return
	}
	s, dl, fail := c.getDict(t, a[0], kindSet)
	switch {
	case fail:
		return
	case s.len() == 0 && !withCount:
		c.w.null()
		return
	}
	picks := randomPicks(s.len(), n)
	got := make([]string, len(picks))
	for i, p := range picks {
		got[i] = s.keys[p]
	}
	s.del(got...)
	if len(got) > 0 && !c.putDict(t, a[0], s, kindSet, dl) {
		return
	}
	rem := [][]byte{[]byte("SREM"), a[0]} // replicas remove what was drawn here
	for _, m := range got {
		rem = append(rem, []byte(m))
	}
	if len(got) > 0 {
		t.propagate(rem...)
	}
	if withCount {
		c.w.members(got)
	} else {
		c.w.bulkString(got[0])
	}
}

func cmdSrandmember(c *conn, t *tx, a [][]byte) {
	if len(a) > 2 {
		c.w.err(errSyntax)
		return
	}
	var n int64
	if len(a) == 2 {
		var ok bool
		if n, ok = c.intArg(a[1]); !ok {
			return
		}
		if n < -maxRandomReply {
			c.w.err("ERR value is out of range")
			return
		}
	}
	s, _, fail := c.getDict(t, a[0], kindSet)
	switch {
	case fail:
	case len(a) == 1 && s.len() == 0:
		c.w.null()
	case len(a) == 1:
		c.w.bulkString(s.keys[randomPicks(s.len(), 1)[0]])
	default:
		picks := randomPicks(s.len(), n)
		c.w.array(len(picks))
		for _, p := range picks {
			c.w.bulkString(s.keys[p])
		}
	}
}

func cmdSmove(c *conn, t *tx, a [][]byte) {
	src, sdl, fail := c.getDict(t, a[0], kindSet)
	if fail {
		return
	}
	dst, ddl, fail := c.getDict(t, a[1], kindSet)
	if fail {
		return
	}
	m := string(a[2])
	if _, ok := src.idx[m]; !ok {
		c.w.int(0)
		return
	}
	if string(a[0]) != string(a[1]) {
		src.del(m)
		dst.set(m, nil)
		if !c.putDict(t, a[0], src, kindSet, sdl) || !c.putDict(t, a[1], dst, kindSet, ddl) {
			return
		}
	}
	c.w.int(1)
}

// setAlgebra is SINTER, SUNION and SDIFF of keys, answered, or stored at
// dst (when not nil) and counted.
func setAlgebra(c *conn, t *tx, op string, keys [][]byte, dst []byte) {
	sets, ok := c.getSets(t, keys)
	if !ok {
		return
	}
	out := newDict(0)
	switch op {
	case "sunion":
		for _, s := range sets {
			for _, m := range s.keys {
				out.set(m, nil)
			}
		}
	case "sinter":
		for _, m := range sets[0].keys {
			if inAll(m, sets[1:]) {
				out.set(m, nil)
			}
		}
	default: // sdiff
		for _, m := range sets[0].keys {
			if !inAny(m, sets[1:]) {
				out.set(m, nil)
			}
		}
	}
	if dst == nil {
		c.w.members(out.keys)
		return
	}
	if c.putDict(t, dst, out, kindSet, 0) {
		c.w.int(int64(out.len()))
	}
}

// getSets reads keys as sets (absent ones empty).
func (c *conn) getSets(t *tx, keys [][]byte) ([]*dict, bool) {
	sets := make([]*dict, len(keys))
	for i, k := range keys {
		s, _, fail := c.getDict(t, k, kindSet)
		if fail {
			return nil, false
		}
		sets[i] = s
	}
	return sets, true
}

func inAll(m string, sets []*dict) bool {
	for _, s := range sets {
		if _, ok := s.idx[m]; !ok {
			return false
		}
	}
	return true
}

func inAny(m string, sets []*dict) bool {
	for _, s := range sets {
		if _, ok := s.idx[m]; ok {
			return true
		}
	}
	return false
}

func cmdSintercard(c *conn, t *tx, a [][]byte) {
	n, ok := parseInt(a[0])
	if !ok || n <= 0 {
		c.w.err("ERR numkeys should be greater than 0")
		return
	}
	if n > int64(len(a)-1) {
		c.w.err("ERR Number of keys can't be greater than number of args")
		return
	}
	keys, rest := a[1:1+n], a[1+n:]
	limit := int64(0)
	switch {
	case len(rest) == 2 && eq(rest[0], "limit"):
		if limit, ok = parseInt(rest[1]); !ok || limit < 0 {
			c.w.err("ERR LIMIT can't be negative")
			return
		}
	case len(rest) != 0:
		c.w.err(errSyntax)
		return
	}
	sets, ok := c.getSets(t, keys)
	if !ok {
		return
	}
	card := int64(0)
	for _, m := range sets[0].keys {
		if limit != 0 && card == limit {
			break
		}
		if inAll(m, sets[1:]) {
			card++
		}
	}
	c.w.int(card)
}

// maxRandomReply bounds the elements a negative count asks of
// SRANDMEMBER/HRANDFIELD/ZRANDMEMBER (Redis builds any number of them).
const maxRandomReply = 1 << 24

// collScan is HSCAN, SSCAN and ZSCAN: key cursor [MATCH p] [COUNT n].
// A collection is one value, so the first call answers every element
// (cursor 0), as Redis does for its small encodings.
func collScan(c *conn, t *tx, a [][]byte, kind int) {
	if _, err := strconv.ParseUint(string(a[1]), 10, 64); err != nil {
		c.w.err("ERR invalid cursor")
		return
	}
	pat := "*"
	for i := 2; i < len(a); i += 2 {
		switch {
		case i+1 >= len(a):
			c.w.err(errSyntax)
			return
		case eq(a[i], "match"):
			pat = string(a[i+1])
		case eq(a[i], "count"):
			n, ok := c.intArg(a[i+1])
			if !ok {
				return
			}
			if n < 1 {
				c.w.err(errSyntax)
				return
			}
		default:
			c.w.err(errSyntax)
			return
		}
	}
	var out []string
	keep := func(m string) bool { return pat == "*" || globMatch(pat, m) }
	if kind == kindZSet {
		z, _, fail := c.getZSet(t, a[0])
		if fail {
			return
		}
		for _, el := range z.els {
			if keep(el.member) {
				out = append(out, el.member, formatScore(el.score))
			}
		}
	} else {
		h, _, fail := c.getDict(t, a[0], kind)
		if fail {
			return
		}
		for i, k := range h.keys {
			if keep(k) {
				out = append(out, k)
				if kind == kindHash {
					out = append(out, string(h.vals[i]))
				}
			}
		}
	}
	c.w.array(2)
	c.w.bulkString("0")
	c.w.array(len(out))
	for _, s := range out {
		c.w.bulkString(s)
	}
}
