package server

import (
	"math"
	"slices"
	"strings"
)

// ZUNION, ZINTER, ZDIFF (answered or +STORE) and ZINTERCARD over sorted
// sets and sets (a set's members score 1).

func init() {
	for _, op := range []string{"zunion", "zinter", "zdiff"} {
		keyCmd(op, -3, fReadS, 2, -1, 1, func(c *conn, t *tx, a [][]byte) { zsetOp(c, t, op, a, nil) })
		keyCmd(op+"store", -4, fWrite, 1, -1, 1, func(c *conn, t *tx, a [][]byte) { zsetOp(c, t, op, a[1:], a[0]) })
	}
	keyCmd("zintercard", -3, fReadS, 2, -1, 1, func(c *conn, t *tx, a [][]byte) { zsetOp(c, t, "zintercard", a, nil) })
}

// zopArgs are the options after the keys.
type zopArgs struct {
	weights    []float64
	agg        string // sum, min, max
	withScores bool
	limit      int64 // ZINTERCARD
}

func parseZop(c *conn, op string, n int, rest [][]byte, store bool) (zopArgs, bool) {
	o := zopArgs{agg: "sum"}
	full := op == "zunion" || op == "zinter"
	for j := 0; j < len(rest); j++ {
		left := len(rest) - j - 1
		switch {
		case full && eq(rest[j], "weights") && left >= n:
			o.weights = make([]float64, n)
			for i := range n {
				w, ok := parseScore(rest[j+1+i])
				if !ok {
					c.w.err("ERR weight value is not a float")
					return o, false
				}
				o.weights[i] = w
			}
			j += n
		case full && eq(rest[j], "aggregate") && left >= 1:
			switch {
			case eq(rest[j+1], "sum"), eq(rest[j+1], "min"), eq(rest[j+1], "max"):
				o.agg = strings.ToLower(string(rest[j+1]))
			default:
				c.w.err(errSyntax)
				return o, false
			}
			j++
		case !store && op != "zintercard" && eq(rest[j], "withscores"):
			o.withScores = true
		case op == "zintercard" && eq(rest[j], "limit") && left >= 1:
			l, ok := parseInt(rest[j+1])
			if !ok || l < 0 {
				c.w.err("ERR LIMIT can't be negative")
				return o, false
			}
			o.limit = l
			j++
		default:
			c.w.err(errSyntax)
			return o, false
		}
	}
	return o, true
}

// getScored reads key as a sorted set, or a set whose members score 1.
func (c *conn) getScored(t *tx, key []byte) (*zset, bool) {
	e, ok, fail := c.getRaw(t, key)
	if fail {
		return nil, false
	}
	if k, _ := kindOf(e.Value); ok && k == kindSet {
		s, _, fail := c.getDict(t, key, kindSet)
		if fail {
			return nil, false
		}
		z := newZSet(s.len())
		for _, m := range s.keys {
			z.add(m, 1)
		}
		return z, true
	}
	z, _, fail := c.getZSet(t, key)
	return z, !fail
}

func aggregate(agg string, a, b float64) float64 {
	switch agg {
	case "min":
		return math.Min(a, b)
	case "max":
		return math.Max(a, b)
	}
	if s := a + b; !math.IsNaN(s) {
		return s
	}
	return 0 // inf + -inf, as Redis
}

func zsetOp(c *conn, t *tx, op string, a [][]byte, dst []byte) {
	n, ok := parseInt(a[0])
	switch {
	case op == "zintercard" && (!ok || n <= 0):
		c.w.err("ERR numkeys should be greater than 0")
		return
	case !ok:
		c.w.err(errNotInt)
		return
	case n < 1:
		name := op
		if dst != nil {
			name += "store"
		}
		c.w.err("ERR at least 1 input key is needed for '" + name + "' command")
		return
	case n > int64(len(a)-1):
		if op == "zintercard" {
			c.w.err("ERR Number of keys can't be greater than number of args")
		} else {
			c.w.err(errSyntax)
		}
		return
	}
	o, ok := parseZop(c, op, int(n), a[1+n:], dst != nil)
	if !ok {
		return
	}
	zs := make([]*zset, n)
	for i, k := range a[1 : 1+n] {
		if zs[i], ok = c.getScored(t, k); !ok {
			return
		}
	}
	out := combine(op, zs, o)
	switch {
	case op == "zintercard":
		card := int64(len(out.els))
		if o.limit > 0 {
			card = min(card, o.limit)
		}
		c.w.int(card)
	case dst != nil:
		if c.putZSet(t, dst, out, 0) {
			c.w.int(int64(len(out.els)))
		}
	case o.withScores:
		c.w.zels(out.els, c.w.resp3)
	default:
		c.w.array(len(out.els))
		for _, el := range out.els {
			c.w.bulkString(el.member)
		}
	}
}

// combine is the union, intersection or difference of zs.
func combine(op string, zs []*zset, o zopArgs) *zset {
	weight := func(i int, s float64) float64 {
		if o.weights == nil {
			return s
		}
		if v := s * o.weights[i]; !math.IsNaN(v) {
			return v
		}
		return 0
	}
	acc := map[string]float64{}
	for _, el := range zs[0].els {
		acc[el.member] = weight(0, el.score)
	}
	for i, z := range zs[1:] {
		switch op {
		case "zunion":
			for _, el := range z.els {
				if cur, ok := acc[el.member]; ok {
					acc[el.member] = aggregate(o.agg, cur, weight(i+1, el.score))
				} else {
					acc[el.member] = weight(i+1, el.score)
				}
			}
		case "zdiff":
			for _, el := range z.els {
				delete(acc, el.member)
			}
		default: // zinter, zintercard
			for m, cur := range acc {
				if s, ok := z.score[m]; ok {
					acc[m] = aggregate(o.agg, cur, weight(i+1, s))
				} else {
					delete(acc, m)
				}
			}
		}
	}
	out := &zset{els: make([]zel, 0, len(acc)), score: acc}
	for m, s := range acc {
		out.els = append(out.els, zel{s, m})
	}
	slices.SortFunc(out.els, zless)
	return out
}
