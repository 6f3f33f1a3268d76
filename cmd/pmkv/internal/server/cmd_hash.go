package server

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
)

// Hashes: one kv value per hash (types.go), fields in insertion order.

func init() {
	keyCmd("hset", -4, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { hset(c, t, a, "hset") })
	keyCmd("hmset", -4, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { hset(c, t, a, "hmset") })
	keyCmd("hsetnx", 4, fWriteF, 1, 1, 1, cmdHsetnx)
	keyCmd("hget", 3, fRead, 1, 1, 1, cmdHget)
	keyCmd("hmget", -3, fRead, 1, 1, 1, cmdHmget)
	keyCmd("hgetall", 2, fReadS, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { hgetall(c, t, a[0], true, true) })
	keyCmd("hkeys", 2, fReadS, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { hgetall(c, t, a[0], true, false) })
	keyCmd("hvals", 2, fReadS, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { hgetall(c, t, a[0], false, true) })
	keyCmd("hdel", -3, fWriteF, 1, 1, 1, cmdHdel)
	keyCmd("hexists", 3, fRead, 1, 1, 1, cmdHexists)
	keyCmd("hlen", 2, fRead, 1, 1, 1, cmdHlen)
	keyCmd("hstrlen", 3, fRead, 1, 1, 1, cmdHstrlen)
	keyCmd("hincrby", 4, fWriteF, 1, 1, 1, cmdHincrby)
	keyCmd("hincrbyfloat", 4, fWriteF, 1, 1, 1, cmdHincrbyfloat)
	keyCmd("hrandfield", -2, fReadS, 1, 1, 1, cmdHrandfield)
	keyCmd("hscan", -3, fReadS, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { collScan(c, t, a, kindHash) })
}

func hset(c *conn, t *tx, a [][]byte, name string) {
	if len(a)%2 != 1 {
		c.w.err("ERR wrong number of arguments for '" + name + "' command")
		return
	}
	h, dl, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	added := int64(0)
	for i := 1; i < len(a); i += 2 {
		if h.set(string(a[i]), a[i+1]) {
			added++
		}
	}
	if !c.putDict(t, a[0], h, kindHash, dl) {
		return
	}
	if name == "hmset" {
		c.w.ok()
	} else {
		c.w.int(added)
	}
}

func cmdHsetnx(c *conn, t *tx, a [][]byte) {
	h, dl, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	if _, ok := h.get(string(a[1])); ok {
		c.w.int(0)
		return
	}
	h.set(string(a[1]), a[2])
	if c.putDict(t, a[0], h, kindHash, dl) {
		c.w.int(1)
	}
}

func cmdHget(c *conn, t *tx, a [][]byte) {
	h, _, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	if v, ok := h.get(string(a[1])); ok {
		c.w.bulk(v)
	} else {
		c.w.null()
	}
}

func cmdHmget(c *conn, t *tx, a [][]byte) {
	h, _, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	c.w.array(len(a) - 1)
	for _, f := range a[1:] {
		if v, ok := h.get(string(f)); ok {
			c.w.bulk(v)
		} else {
			c.w.null()
		}
	}
}

func hgetall(c *conn, t *tx, key []byte, fields, vals bool) {
	h, _, fail := c.getDict(t, key, kindHash)
	if fail {
		return
	}
	if fields && vals {
		c.w.mapHeader(h.len())
	} else {
		c.w.array(h.len())
	}
	for i, k := range h.keys {
		if fields {
			c.w.bulkString(k)
		}
		if vals {
			c.w.bulk(h.vals[i])
		}
	}
}

func cmdHdel(c *conn, t *tx, a [][]byte) {
	h, dl, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	fs := make([]string, len(a)-1)
	for i, f := range a[1:] {
		fs[i] = string(f)
	}
	n := h.del(fs...)
	if n > 0 && !c.putDict(t, a[0], h, kindHash, dl) {
		return
	}
	c.w.int(int64(n))
}

func cmdHexists(c *conn, t *tx, a [][]byte) {
	h, _, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	if _, ok := h.get(string(a[1])); ok {
		c.w.int(1)
	} else {
		c.w.int(0)
	}
}

func cmdHlen(c *conn, t *tx, a [][]byte) {
	if h, _, fail := c.getDict(t, a[0], kindHash); !fail {
		c.w.int(int64(h.len()))
	}
}

func cmdHstrlen(c *conn, t *tx, a [][]byte) {
	h, _, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	v, _ := h.get(string(a[1]))
	c.w.int(int64(len(v)))
}

func cmdHincrby(c *conn, t *tx, a [][]byte) {
	by, ok := c.intArg(a[2])
	if !ok {
		return
	}
	h, dl, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	var n int64
	if v, had := h.get(string(a[1])); had {
		if n, ok = parseInt(v); !ok {
			c.w.err("ERR hash value is not an integer")
			return
		}
	}
	if (by > 0 && n > math.MaxInt64-by) || (by < 0 && n < math.MinInt64-by) {
		c.w.err(errOverflow)
		return
	}
	n += by
	h.set(string(a[1]), strconv.AppendInt(nil, n, 10))
	if c.putDict(t, a[0], h, kindHash, dl) {
		c.w.int(n)
	}
}

func cmdHincrbyfloat(c *conn, t *tx, a [][]byte) {
	by, ok := parseFloat(a[2])
	switch {
	case !ok:
		c.w.err(errNotFloat)
		return
	case by.IsInf():
		c.w.err("ERR value is NaN or Infinity")
		return
	}
	h, dl, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	cur := new(big.Float).SetPrec(longDouble)
	if v, had := h.get(string(a[1])); had {
		if cur, ok = parseFloat(v); !ok {
			c.w.err("ERR hash value is not a float")
			return
		}
	}
	sum := new(big.Float).SetPrec(longDouble).Add(cur, by)
	if cur.IsInf() || isInfOrBig(sum) {
		c.w.err(errNaN)
		return
	}
	s := formatLongDouble(sum)
	h.set(string(a[1]), []byte(s))
	if c.putDict(t, a[0], h, kindHash, dl) {
		c.w.bulkString(s)
	}
}

func cmdHrandfield(c *conn, t *tx, a [][]byte) {
	if len(a) == 1 {
		h, _, fail := c.getDict(t, a[0], kindHash)
		switch {
		case fail:
		case h.len() == 0:
			c.w.null()
		default:
			c.w.bulkString(h.keys[rand.IntN(h.len())])
		}
		return
	}
	n, ok := c.intArg(a[1])
	if !ok {
		return
	}
	withValues := len(a) == 3
	if len(a) > 3 || (withValues && !eq(a[2], "withvalues")) {
		c.w.err(errSyntax)
		return
	}
	if n < -maxRandomReply || (withValues && n > math.MaxInt64/2) {
		c.w.err("ERR value is out of range")
		return
	}
	h, _, fail := c.getDict(t, a[0], kindHash)
	if fail {
		return
	}
	picks := randomPicks(h.len(), n)
	switch {
	case withValues && c.w.resp3:
		c.w.array(len(picks))
	case withValues:
		c.w.array(2 * len(picks))
	default:
		c.w.array(len(picks))
	}
	for _, i := range picks {
		if withValues && c.w.resp3 {
			c.w.array(2)
		}
		c.w.bulkString(h.keys[i])
		if withValues {
			c.w.bulk(h.vals[i])
		}
	}
}

// randomPicks is the indexes of n random elements of size (Redis's
// HRANDFIELD/SRANDMEMBER/ZRANDMEMBER count): n >= 0 distinct ones (all
// when n >= size), n < 0 -n ones that may repeat.
func randomPicks(size int, n int64) []int {
	if size == 0 || n == 0 {
		return nil
	}
	if n < 0 {
		out := make([]int, -n)
		for i := range out {
			out[i] = rand.IntN(size)
		}
		return out
	}
	perm := rand.Perm(size)
	return perm[:min(int64(size), n)]
}
