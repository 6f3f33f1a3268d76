package server

import (
	"slices"
	"sort"
)

// The range commands of sorted sets: by rank, score or member (lex), in
// either direction, with LIMIT, answered or stored (ZRANGESTORE), counted
// (ZCOUNT, ZLEXCOUNT) or removed (ZREMRANGEBY*).

func init() {
	rng := func(by, dir int) func(*conn, *tx, [][]byte) {
		return func(c *conn, t *tx, a [][]byte) { zrange(c, t, a, by, dir, nil) }
	}
	keyCmd("zrange", -4, fReadS, 1, 1, 1, rng(byAuto, dirAuto))
	keyCmd("zrevrange", -4, fReadS, 1, 1, 1, rng(byRank, dirRev))
	keyCmd("zrangebyscore", -4, fReadS, 1, 1, 1, rng(byScore, dirFwd))
	keyCmd("zrevrangebyscore", -4, fReadS, 1, 1, 1, rng(byScore, dirRev))
	keyCmd("zrangebylex", -4, fReadS, 1, 1, 1, rng(byLex, dirFwd))
	keyCmd("zrevrangebylex", -4, fReadS, 1, 1, 1, rng(byLex, dirRev))
	keyCmd("zrangestore", -5, fWrite, 1, 2, 1, func(c *conn, t *tx, a [][]byte) { zrange(c, t, a[1:], byAuto, dirAuto, a[0]) })
	keyCmd("zcount", 4, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { zcount(c, t, a, byScore, false) })
	keyCmd("zlexcount", 4, fRead, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { zcount(c, t, a, byLex, false) })
	keyCmd("zremrangebyrank", 4, fDel, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { zcount(c, t, a, byRank, true) })
	keyCmd("zremrangebyscore", 4, fDel, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { zcount(c, t, a, byScore, true) })
	keyCmd("zremrangebylex", 4, fDel, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { zcount(c, t, a, byLex, true) })
}

const (
	byAuto = iota
	byRank
	byScore
	byLex
)

const (
	dirAuto = iota
	dirFwd
	dirRev
)

// zspec is a range of a sorted set.
type zspec struct {
	by            int
	rev           bool
	start, stop   int64 // byRank
	smin, smax    scoreBound
	lmin, lmax    lexBound
	offset, limit int64 // LIMIT (limit < 0: all)
	withScores    bool
}

type scoreBound struct {
	v    float64
	excl bool
}

// lexBound is a member bound: inf -1 is "-", +1 is "+".
type lexBound struct {
	s    string
	excl bool
	inf  int
}

func parseScoreBound(b []byte) (scoreBound, bool) {
	var sb scoreBound
	if len(b) > 0 && b[0] == '(' {
		sb.excl, b = true, b[1:]
	}
	v, ok := parseScore(b)
	sb.v = v
	return sb, ok
}

func parseLexBound(b []byte) (lexBound, bool) {
	switch {
	case len(b) == 1 && b[0] == '-':
		return lexBound{inf: -1}, true
	case len(b) == 1 && b[0] == '+':
		return lexBound{inf: 1}, true
	case len(b) > 0 && (b[0] == '(' || b[0] == '['):
		return lexBound{s: string(b[1:]), excl: b[0] == '('}, true
	}
	return lexBound{}, false
}

// parseBounds parses min and max for spec's kind.
func (sp *zspec) parseBounds(c *conn, lo, hi []byte) bool {
	var ok1, ok2 bool
	switch sp.by {
	case byRank:
		sp.start, ok1 = parseInt(lo)
		sp.stop, ok2 = parseInt(hi)
		if !ok1 || !ok2 {
			c.w.err(errNotInt)
			return false
		}
	case byScore:
		sp.smin, ok1 = parseScoreBound(lo)
		sp.smax, ok2 = parseScoreBound(hi)
		if !ok1 || !ok2 {
			c.w.err("ERR min or max is not a float")
			return false
		}
	default:
		sp.lmin, ok1 = parseLexBound(lo)
		sp.lmax, ok2 = parseLexBound(hi)
		if !ok1 || !ok2 {
			c.w.err("ERR min or max not valid string range item")
			return false
		}
	}
	return true
}

// parseZrange parses key min max [BYSCORE|BYLEX] [REV] [LIMIT o c]
// [WITHSCORES] (a is after the command name; by and dir preset by the
// older commands).
func parseZrange(c *conn, a [][]byte, by, dir int, store bool) (zspec, bool) {
	sp := zspec{limit: -1}
	limited := false
	for j := 3; j < len(a); j++ {
		switch {
		case !store && eq(a[j], "withscores"):
			sp.withScores = true
		case eq(a[j], "limit") && j+2 < len(a):
			o, ok1 := parseInt(a[j+1])
			l, ok2 := parseInt(a[j+2])
			if !ok1 || !ok2 {
				c.w.err(errNotInt)
				return sp, false
			}
			sp.offset, sp.limit, limited = o, l, true
			j += 2
		case dir == dirAuto && eq(a[j], "rev"):
			dir = dirRev
		case by == byAuto && eq(a[j], "bylex"):
			by = byLex
		case by == byAuto && eq(a[j], "byscore"):
			by = byScore
		default:
			c.w.err(errSyntax)
			return sp, false
		}
	}
	sp.by, sp.rev = max(by, byRank), dir == dirRev
	switch {
	case limited && sp.limit != -1 && sp.by == byRank:
		c.w.err("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return sp, false
	case sp.withScores && sp.by == byLex:
		c.w.err("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return sp, false
	}
	lo, hi := a[1], a[2]
	if sp.rev && sp.by != byRank {
		lo, hi = hi, lo // given as max, min
	}
	return sp, sp.parseBounds(c, lo, hi)
}

// span is the index range [lo, hi) of z's elements within sp's bounds.
func (z *zset) span(sp *zspec) (int, int) {
	n := len(z.els)
	switch sp.by {
	case byRank:
		lo, hi := rangeIndexes(sp.start, sp.stop, n)
		if sp.rev { // ranks counted from the highest
			lo, hi = n-hi, n-lo
		}
		return lo, hi
	case byScore:
		lo := sort.Search(n, func(i int) bool { return !below(z.els[i].score, sp.smin) })
		hi := sort.Search(n, func(i int) bool { return above(z.els[i].score, sp.smax) })
		return lo, max(lo, hi)
	}
	lo := sort.Search(n, func(i int) bool { return !lexBelow(z.els[i].member, sp.lmin) })
	hi := sort.Search(n, func(i int) bool { return lexAbove(z.els[i].member, sp.lmax) })
	return lo, max(lo, hi)
}

func below(v float64, b scoreBound) bool { return v < b.v || (b.excl && v == b.v) }
func above(v float64, b scoreBound) bool { return v > b.v || (b.excl && v == b.v) }

func lexBelow(m string, b lexBound) bool {
	switch b.inf {
	case -1:
		return false
	case 1:
		return true
	}
	return m < b.s || (b.excl && m == b.s)
}

func lexAbove(m string, b lexBound) bool {
	switch b.inf {
	case -1:
		return true
	case 1:
		return false
	}
	return m > b.s || (b.excl && m == b.s)
}

// pick is sp's elements of z in reply order, LIMIT applied.
func (z *zset) pick(sp *zspec) []zel {
	lo, hi := z.span(sp)
	els := slices.Clone(z.els[lo:hi])
	if sp.rev {
		slices.Reverse(els)
	}
	if sp.by != byRank {
		if sp.offset < 0 {
			return nil
		}
		els = els[min(int64(len(els)), sp.offset):]
		if sp.limit >= 0 && sp.limit < int64(len(els)) {
			els = els[:sp.limit]
		}
	}
	return els
}

// zrange answers a range of a[0] (or stores it at dst).
func zrange(c *conn, t *tx, a [][]byte, by, dir int, dst []byte) {
	sp, ok := parseZrange(c, a, by, dir, dst != nil)
	if !ok {
		return
	}
	z, _, fail := c.getZSet(t, a[0])
	if fail {
		return
	}
	els := z.pick(&sp)
	if dst != nil {
		out := newZSet(len(els))
		for _, el := range els {
			out.add(el.member, el.score)
		}
		if c.putZSet(t, dst, out, 0) {
			c.w.int(int64(len(els)))
		}
		return
	}
	if !sp.withScores {
		c.w.array(len(els))
		for _, el := range els {
			c.w.bulkString(el.member)
		}
		return
	}
	c.w.zels(els, c.w.resp3)
}

// zcount is ZCOUNT/ZLEXCOUNT (rem false) and ZREMRANGEBY* (rem true).
func zcount(c *conn, t *tx, a [][]byte, by int, rem bool) {
	sp := zspec{by: by, limit: -1}
	if !sp.parseBounds(c, a[1], a[2]) {
		return
	}
	z, dl, fail := c.getZSet(t, a[0])
	if fail {
		return
	}
	lo, hi := z.span(&sp)
	if rem && hi > lo {
		for _, el := range z.els[lo:hi] {
			delete(z.score, el.member)
		}
		z.els = slices.Delete(z.els, lo, hi)
		if !c.putZSet(t, a[0], z, dl) {
			return
		}
	}
	c.w.int(int64(hi - lo))
}
