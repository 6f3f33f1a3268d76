package server

import (
	"math"
)

// Sorted sets: one kv value per sorted set (types.go), elements in
// (score, member) order. The range commands are in cmd_zrange.go.

func init() {
	keyCmd("zadd", -4, fWriteF, 1, 1, 1, cmdZadd)
	keyCmd("zincrby", 4, fWriteF, 1, 1, 1, cmdZincrby)
	keyCmd("zrem", -3, fWriteF, 1, 1, 1, cmdZrem)
	keyCmd("zscore", 3, fRead, 1, 1, 1, cmdZscore)
	keyCmd("zmscore", -3, fRead, 1, 1, 1, cmdZmscore)
	keyCmd("zcard", 2, fRead, 1, 1, 1, cmdZcard)
	keyCmd("zrank", 3, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { zrank(c, t, a, false) })
	keyCmd("zrevrank", 3, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { zrank(c, t, a, true) })
	keyCmd("zpopmin", -2, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { zpop(c, t, a, false) })
	keyCmd("zpopmax", -2, fWriteF, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { zpop(c, t, a, true) })
	keyCmd("zmpop", -4, fWrite, 2, -2, 1, cmdZmpop)
	keyCmd("zrandmember", -2, fReadS, 1, 1, 1, cmdZrandmember)
	keyCmd("zscan", -3, fReadS, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { collScan(c, t, a, kindZSet) })
}

const errNaNScore = "ERR resulting score is not a number (NaN)"

// zaddFlags are ZADD's options.
type zaddFlags struct{ nx, xx, gt, lt, ch, incr bool }

func parseZadd(c *conn, a [][]byte) (f zaddFlags, pairs [][]byte, ok bool) {
	i := 1
	for ; i < len(a); i++ {
		switch {
		case eq(a[i], "nx"):
			f.nx = true
		case eq(a[i], "xx"):
			f.xx = true
		case eq(a[i], "gt"):
			f.gt = true
		case eq(a[i], "lt"):
			f.lt = true
		case eq(a[i], "ch"):
			f.ch = true
		case eq(a[i], "incr"):
			f.incr = true
		default:
			goto pairs
		}
	}
pairs:
	pairs = a[i:]
	switch {
	case len(pairs) == 0 || len(pairs)%2 != 0:
		c.w.err(errSyntax)
	case f.nx && f.xx:
		c.w.err("ERR XX and NX options at the same time are not compatible")
	case (f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt):
		c.w.err("ERR GT, LT, and/or NX options at the same time are not compatible")
	case f.incr && len(pairs) > 2:
		c.w.err("ERR INCR option supports a single increment-element pair")
	default:
		return f, pairs, true
	}
	return f, nil, false
}

// zadd applies one score-member pair under f to z: whether it was added
// or its score changed, the member's score after it, whether it did
// anything at all, and whether the result is NaN (nothing changed).
func zadd(z *zset, f zaddFlags, score float64, m string) (added, updated bool, now float64, done, nan bool) {
	cur, had := z.score[m]
	if !had {
		if f.xx {
			return false, false, 0, false, false
		}
		z.add(m, score)
		return true, false, score, true, false
	}
	if f.nx {
		return false, false, cur, false, false
	}
	if f.incr {
		score += cur
		if math.IsNaN(score) {
			return false, false, 0, false, true
		}
	}
	if (f.lt && score >= cur) || (f.gt && score <= cur) {
		return false, false, cur, false, false
	}
	if score != cur {
		z.add(m, score)
		return false, true, score, true, false
	}
	return false, false, cur, true, false
}

func cmdZadd(c *conn, t *tx, a [][]byte) {
	f, pairs, ok := parseZadd(c, a)
	if ok {
		zaddPairs(c, t, a[0], f, pairs)
	}
}

func cmdZincrby(c *conn, t *tx, a [][]byte) {
	zaddPairs(c, t, a[0], zaddFlags{incr: true}, a[1:])
}

func zaddPairs(c *conn, t *tx, key []byte, f zaddFlags, pairs [][]byte) {
	scores := make([]float64, len(pairs)/2)
	for i := range scores {
		s, ok := parseScore(pairs[2*i])
		if !ok {
			c.w.err(errNotFloat)
			return
		}
		scores[i] = s
	}
	z, dl, fail := c.getZSet(t, key)
	if fail {
		return
	}
	var added, changed int64
	var last float64
	did := false
	for i, s := range scores {
		a, u, now, done, nan := zadd(z, f, s, string(pairs[2*i+1]))
		if nan {
			c.w.err(errNaNScore)
			return
		}
		if a {
			added++
		}
		if u {
			changed++
		}
		last, did = now, done
	}
	if added+changed > 0 && !c.putZSet(t, key, z, dl) {
		return
	}
	switch {
	case f.incr && did:
		c.w.double(last)
	case f.incr:
		c.w.null()
	case f.ch:
		c.w.int(added + changed)
	default:
		c.w.int(added)
	}
}

func cmdZrem(c *conn, t *tx, a [][]byte) {
	z, dl, fail := c.getZSet(t, a[0])
	if fail {
		return
	}
	n := int64(0)
	for _, m := range a[1:] {
		if z.rem(string(m)) {
			n++
		}
	}
	if n > 0 && !c.putZSet(t, a[0], z, dl) {
		return
	}
	c.w.int(n)
}

func cmdZscore(c *conn, t *tx, a [][]byte) {
	z, _, fail := c.getZSet(t, a[0])
	if fail {
		return
	}
	if s, ok := z.score[string(a[1])]; ok {
		c.w.double(s)
	} else {
		c.w.null()
	}
}

func cmdZmscore(c *conn, t *tx, a [][]byte) {
	z, _, fail := c.getZSet(t, a[0])
	if fail {
		return
	}
	c.w.array(len(a) - 1)
	for _, m := range a[1:] {
		if s, ok := z.score[string(m)]; ok {
			c.w.double(s)
		} else {
			c.w.null()
		}
	}
}

func cmdZcard(c *conn, t *tx, a [][]byte) {
	if z, _, fail := c.getZSet(t, a[0]); !fail {
		c.w.int(int64(len(z.els)))
	}
}

func zrank(c *conn, t *tx, a [][]byte, rev bool) {
	z, _, fail := c.getZSet(t, a[0])
	if fail {
		return
	}
	s, ok := z.score[string(a[1])]
	if !ok {
		c.w.null()
		return
	}
	i, _ := z.rank(zel{s, string(a[1])})
	if rev {
		i = len(z.els) - 1 - i
	}
	c.w.int(int64(i))
}

// zpop is ZPOPMIN/ZPOPMAX key [count].
func zpop(c *conn, t *tx, a [][]byte, max bool) {
	n, withCount, ok := c.popCount(a, errSyntax)
	if !ok {
		return
	}
	z, dl, fail := c.getZSet(t, a[0])
	if fail {
		return
	}
	got := z.popEnd(n, max)
	if len(got) > 0 && !c.putZSet(t, a[0], z, dl) {
		return
	}
	c.w.zels(got, withCount && c.w.resp3)
}

// popEnd removes up to n elements from z's lowest (or highest) end and
// returns them in the order they were popped.
func (z *zset) popEnd(n int64, max bool) []zel {
	k := int(min(n, int64(len(z.els))))
	got := make([]zel, k)
	for i := range got {
		if max {
			got[i] = z.els[len(z.els)-1-i]
		} else {
			got[i] = z.els[i]
		}
		delete(z.score, got[i].member)
	}
	if max {
		z.els = z.els[:len(z.els)-k]
	} else {
		z.els = z.els[k:]
	}
	return got
}

// zels writes members with their scores: a flat array, or (nested, RESP3
// with a count) an array of [member, score] pairs.
func (w *writer) zels(els []zel, nested bool) {
	if nested {
		w.array(len(els))
	} else {
		w.array(2 * len(els))
	}
	for _, el := range els {
		if nested {
			w.array(2)
		}
		w.bulkString(el.member)
		w.double(el.score)
	}
}

// cmdZmpop is ZMPOP numkeys key... MIN|MAX [COUNT n].
func cmdZmpop(c *conn, t *tx, a [][]byte) {
	minMax := func(c *conn, b []byte) (bool, bool) {
		switch {
		case eq(b, "max"):
			return true, true
		case eq(b, "min"):
			return false, true
		}
		c.w.err(errSyntax)
		return false, false
	}
	keys, max, count, ok := parseMpop(c, a, "zmpop", minMax)
	if !ok {
		return
	}
	for _, k := range keys {
		z, dl, fail := c.getZSet(t, k)
		if fail {
			return
		}
		if len(z.els) == 0 {
			continue
		}
		got := z.popEnd(count, max)
		if !c.putZSet(t, k, z, dl) {
			return
		}
		c.w.array(2)
		c.w.bulk(k)
		c.w.zels(got, true)
		return
	}
	c.w.nullArray()
}

func cmdZrandmember(c *conn, t *tx, a [][]byte) {
	if len(a) == 1 {
		z, _, fail := c.getZSet(t, a[0])
		switch {
		case fail:
		case len(z.els) == 0:
			c.w.null()
		default:
			c.w.bulkString(z.els[randomPicks(len(z.els), 1)[0]].member)
		}
		return
	}
	n, ok := c.intArg(a[1])
	if !ok {
		return
	}
	withScores := len(a) == 3
	if len(a) > 3 || (withScores && !eq(a[2], "withscores")) {
		c.w.err(errSyntax)
		return
	}
	if n < -maxRandomReply || (withScores && n > math.MaxInt64/2) {
		c.w.err("ERR value is out of range")
		return
	}
	z, _, fail := c.getZSet(t, a[0])
	if fail {
		return
	}
	picks := randomPicks(len(z.els), n)
	if !withScores {
		c.w.array(len(picks))
		for _, i := range picks {
			c.w.bulkString(z.els[i].member)
		}
		return
	}
	got := make([]zel, len(picks))
	for j, i := range picks {
		got[j] = z.els[i]
	}
	c.w.zels(got, c.w.resp3)
}
