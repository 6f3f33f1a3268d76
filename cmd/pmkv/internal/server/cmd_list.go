package server

import (
	"bytes"
	"slices"
	"strings"
)

// Lists: one kv value per list (types.go), read, changed and written back
// whole under the key's lock by each command.

func init() {
	keyCmd("lpush", -3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { push(c, t, a, true, false) })
	keyCmd("rpush", -3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { push(c, t, a, false, false) })
	keyCmd("lpushx", -3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { push(c, t, a, true, true) })
	keyCmd("rpushx", -3, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { push(c, t, a, false, true) })
	keyCmd("lpop", -2, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { pop(c, t, a, true) })
	keyCmd("rpop", -2, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { pop(c, t, a, false) })
	keyCmd("llen", 2, fRead, 1, 1, 1, cmdLlen)
	keyCmd("lindex", 3, fReadS, 1, 1, 1, cmdLindex)
	keyCmd("lrange", 4, fReadS, 1, 1, 1, cmdLrange)
	keyCmd("lset", 4, fWrite, 1, 1, 1, cmdLset)
	keyCmd("lrem", 4, fDel, 1, 1, 1, cmdLrem)
	keyCmd("ltrim", 4, fDel, 1, 1, 1, cmdLtrim)
	keyCmd("linsert", 5, fWrite, 1, 1, 1, cmdLinsert)
	keyCmd("lpos", -3, fReadS, 1, 1, 1, cmdLpos)
	keyCmd("lmove", 5, fWrite, 1, 2, 1, cmdLmove)
	keyCmd("rpoplpush", 3, fWrite, 1, 2, 1, func(c *conn, t *tx, a [][]byte) { lmove(c, t, a[0], a[1], false, true) })
	keyCmd("lmpop", -4, fWrite, 2, -2, 1, func(c *conn, t *tx, a [][]byte) { lmpop(c, t, a, "lmpop") })
}

func push(c *conn, t *tx, a [][]byte, left, onlyIfThere bool) {
	l, dl, fail := c.getList(t, a[0])
	switch {
	case fail:
		return
	case l == nil && onlyIfThere:
		c.w.int(0)
		return
	}
	if left {
		add := make(list, 0, len(a)-1+len(l))
		for i := len(a) - 1; i >= 1; i-- {
			add = append(add, a[i])
		}
		l = append(add, l...)
	} else {
		l = append(l, a[1:]...)
	}
	if c.putList(t, a[0], l, dl) {
		c.w.int(int64(len(l)))
	}
}

// pop is LPOP/RPOP key [count].
func pop(c *conn, t *tx, a [][]byte, left bool) {
	name := "rpop"
	if left {
		name = "lpop"
	}
	n, withCount, ok := c.popCount(a, "ERR wrong number of arguments for '"+name+"' command")
	if !ok {
		return
	}
	l, dl, fail := c.getList(t, a[0])
	switch {
	case fail:
	case l == nil && withCount:
		c.w.nullArray()
	case l == nil:
		c.w.null()
	case withCount && n == 0:
		c.w.array(0)
	default:
		got, rest := takeEnd(l, n, left)
		if !c.putList(t, a[0], rest, dl) {
			return
		}
		if withCount {
			c.w.bulks(got)
		} else {
			c.w.bulk(got[0])
		}
	}
}

// takeEnd takes up to n elements from l's left (or right) end, in the
// order they are popped.
func takeEnd(l list, n int64, left bool) (got, rest list) {
	k := int(min(n, int64(len(l))))
	if left {
		return l[:k:k], l[k:]
	}
	got = make(list, 0, k)
	for i := len(l) - 1; i >= len(l)-k; i-- {
		got = append(got, l[i])
	}
	return got, l[: len(l)-k : len(l)-k]
}

func cmdLlen(c *conn, t *tx, a [][]byte) {
	if l, _, fail := c.getList(t, a[0]); !fail {
		c.w.int(int64(len(l)))
	}
}

func cmdLindex(c *conn, t *tx, a [][]byte) {
	i, ok := c.intArg(a[1])
	if !ok {
		return
	}
	l, _, fail := c.getList(t, a[0])
	if fail {
		return
	}
	if i < 0 {
		i += int64(len(l))
	}
	if i < 0 || i >= int64(len(l)) {
		c.w.null()
		return
	}
	c.w.bulk(l[i])
}

// listRange reads key a[0] as a list and the index range a[1], a[2].
func (c *conn) listRange(t *tx, a [][]byte) (l list, dl int64, lo, hi int, fail bool) {
	start, ok1 := parseInt(a[1])
	stop, ok2 := parseInt(a[2])
	if !ok1 || !ok2 {
		c.w.err(errNotInt)
		return nil, 0, 0, 0, true
	}
	l, dl, fail = c.getList(t, a[0])
	lo, hi = rangeIndexes(start, stop, len(l))
	return l, dl, lo, hi, fail
}

func cmdLrange(c *conn, t *tx, a [][]byte) {
	if l, _, lo, hi, fail := c.listRange(t, a); !fail {
		c.w.bulks(l[lo:hi])
	}
}

func cmdLset(c *conn, t *tx, a [][]byte) {
	i, ok := c.intArg(a[1])
	if !ok {
		return
	}
	l, dl, fail := c.getList(t, a[0])
	switch {
	case fail:
		return
	case l == nil:
		c.w.err(errNoKey)
		return
	}
	if i < 0 {
		i += int64(len(l))
	}
	if i < 0 || i >= int64(len(l)) {
		c.w.err("ERR index out of range")
		return
	}
	l[i] = a[2]
	if c.putList(t, a[0], l, dl) {
		c.w.ok()
	}
}

func cmdLrem(c *conn, t *tx, a [][]byte) {
	n, ok := c.intArg(a[1])
	if !ok {
		return
	}
	l, dl, fail := c.getList(t, a[0])
	if fail {
		return
	}
	removed := int64(0)
	keep := func(v []byte) bool {
		if (n == 0 || removed < max(n, -n)) && bytes.Equal(v, a[2]) {
			removed++
			return false
		}
		return true
	}
	out := make(list, 0, len(l))
	if n >= 0 {
		for _, v := range l {
			if keep(v) {
				out = append(out, v)
			}
		}
	} else {
		for i := len(l) - 1; i >= 0; i-- {
			if keep(l[i]) {
				out = append(out, l[i])
			}
		}
		slices.Reverse(out)
	}
	if removed > 0 && !c.putList(t, a[0], out, dl) {
		return
	}
	c.w.int(removed)
}

func cmdLtrim(c *conn, t *tx, a [][]byte) {
	l, dl, lo, hi, fail := c.listRange(t, a)
	if fail || (l != nil && !c.putList(t, a[0], l[lo:hi], dl)) {
		return
	}
	c.w.ok()
}

func cmdLinsert(c *conn, t *tx, a [][]byte) {
	var after bool
	switch {
	case eq(a[1], "after"):
		after = true
	case eq(a[1], "before"):
	default:
		c.w.err(errSyntax)
		return
	}
	l, dl, fail := c.getList(t, a[0])
	switch {
	case fail:
		return
	case l == nil:
		c.w.int(0)
		return
	}
	i := slices.IndexFunc(l, func(v []byte) bool { return bytes.Equal(v, a[2]) })
	if i < 0 {
		c.w.int(-1)
		return
	}
	if after {
		i++
	}
	l = slices.Insert(l, i, a[3])
	if c.putList(t, a[0], l, dl) {
		c.w.int(int64(len(l)))
	}
}

// lposArgs are LPOS's options.
type lposArgs struct {
	rank, count, maxlen int64
	withCount           bool
}

func parseLpos(c *conn, a [][]byte) (lposArgs, bool) {
	o := lposArgs{rank: 1}
	for i := 0; i < len(a); i += 2 {
		if i+1 >= len(a) || !(eq(a[i], "rank") || eq(a[i], "count") || eq(a[i], "maxlen")) {
			c.w.err(errSyntax)
			return o, false
		}
		n, ok := parseInt(a[i+1])
		switch {
		case eq(a[i], "rank"):
			switch {
			case !ok:
				c.w.err(errNotInt)
				return o, false
			case n == 0 || n == -n: // 0, or MinInt64 (no positive twin)
				c.w.err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return o, false
			}
			o.rank = n
		case !ok || n < 0:
			c.w.err("ERR " + strings.ToUpper(string(a[i])) + " can't be negative")
			return o, false
		case eq(a[i], "count"):
			o.count, o.withCount = n, true
		default:
			o.maxlen = n
		}
	}
	return o, true
}

func cmdLpos(c *conn, t *tx, a [][]byte) {
	o, ok := parseLpos(c, a[2:])
	if !ok {
		return
	}
	l, _, fail := c.getList(t, a[0])
	if fail {
		return
	}
	var found []int64
	skip := max(o.rank, -o.rank) - 1
	want := o.count
	if !o.withCount {
		want = 1
	}
	for j := 0; j < len(l) && (o.maxlen == 0 || int64(j) < o.maxlen); j++ {
		i := j
		if o.rank < 0 {
			i = len(l) - 1 - j
		}
		if !bytes.Equal(l[i], a[1]) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		found = append(found, int64(i))
		if want != 0 && int64(len(found)) == want {
			break
		}
	}
	switch {
	case o.withCount:
		c.w.array(len(found))
		for _, i := range found {
			c.w.int(i)
		}
	case len(found) == 0:
		c.w.null()
	default:
		c.w.int(found[0])
	}
}

// side parses LEFT/RIGHT.
func side(c *conn, b []byte) (left, ok bool) {
	switch {
	case eq(b, "left"):
		return true, true
	case eq(b, "right"):
		return false, true
	}
	c.w.err(errSyntax)
	return false, false
}

func cmdLmove(c *conn, t *tx, a [][]byte) {
	from, ok1 := side(c, a[2])
	if !ok1 {
		return
	}
	to, ok2 := side(c, a[3])
	if !ok2 {
		return
	}
	lmove(c, t, a[0], a[1], from, to)
}

// lmove pops from src's left (from) or right end and pushes onto dst's
// left (to) or right end; it answers the element, or nil.
func lmove(c *conn, t *tx, src, dst []byte, from, to bool) {
	sl, sdl, fail := c.getList(t, src)
	if fail {
		return
	}
	if sl == nil {
		c.w.null()
		return
	}
	dl, ddl, fail := c.getList(t, dst) // WRONGTYPE before anything changes
	if fail {
		return
	}
	got, rest := takeEnd(sl, 1, from)
	if bytes.Equal(src, dst) {
		dl, ddl = rest, sdl
	} else if !c.putList(t, src, rest, sdl) {
		return
	}
	if to {
		dl = append(list{got[0]}, dl...)
	} else {
		dl = append(dl, got[0])
	}
	if c.putList(t, dst, dl, ddl) {
		c.w.bulk(got[0])
	}
}

// lmpop is LMPOP numkeys key... LEFT|RIGHT [COUNT n]: it pops from the
// first non-empty list and answers [key, elements], or a null array.
func lmpop(c *conn, t *tx, a [][]byte, name string) {
	keys, left, count, ok := parseMpop(c, a, name, side)
	if !ok {
		return
	}
	for _, k := range keys {
		l, dl, fail := c.getList(t, k)
		if fail {
			return
		}
		if l == nil {
			continue
		}
		got, rest := takeEnd(l, count, left)
		if !c.putList(t, k, rest, dl) {
			return
		}
		c.w.array(2)
		c.w.bulk(k)
		c.w.bulks(got)
		return
	}
	c.w.nullArray()
}

// parseMpop parses numkeys key... WHERE [COUNT n] of LMPOP and ZMPOP.
func parseMpop(c *conn, a [][]byte, name string, where func(*conn, []byte) (bool, bool)) (keys [][]byte, w bool, count int64, ok bool) {
	n, isInt := parseInt(a[0])
	if !isInt || n <= 0 {
		c.w.err("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	if n > int64(len(a)-2) {
		c.w.err(errSyntax)
		return nil, false, 0, false
	}
	keys, rest := a[1:1+n], a[1+n:]
	if w, ok = where(c, rest[0]); !ok {
		return nil, false, 0, false
	}
	count = 1
	switch {
	case len(rest) == 3 && eq(rest[1], "count"):
		count, isInt = parseInt(rest[2])
		if !isInt || count <= 0 {
			c.w.err("ERR count should be greater than 0")
			return nil, false, 0, false
		}
	case len(rest) != 1:
		c.w.err(errSyntax)
		return nil, false, 0, false
	}
	_ = name
	return keys, w, count, true
}
