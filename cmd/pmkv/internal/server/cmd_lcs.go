package server

func init() {
	keyCmd("lcs", -3, []string{"readonly"}, 1, 2, 1, cmdLCS)
}

// lcsRange is one run of LCS IDX: a's and b's bytes [start, end].
type lcsRange struct{ a0, a1, b0, b1 int }

// cmdLCS answers LCS a b [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN] as
// Redis 7.0 does (its dynamic programming table and its walk back, so
// that the runs come in its order).
func cmdLCS(c *conn, t *tx, a [][]byte) {
	var getLen, getIdx, withLen bool
	minLen := int64(0)
	for i := 2; i < len(a); i++ {
		switch {
		case eq(a[i], "len"):
			getLen = true
		case eq(a[i], "idx"):
			getIdx = true
		case eq(a[i], "withmatchlen"):
			withLen = true
		case eq(a[i], "minmatchlen") && i+1 < len(a):
			n, ok := parseInt(a[i+1])
			if !ok {
				c.w.err(errNotInt)
				return
			}
			minLen = max(n, 0)
			i++
		default:
			c.w.err(errSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.w.err("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	x, _, fail := c.get(t, a[0])
	if fail {
		return
	}
	y, _, fail := c.get(t, a[1])
	if fail {
		return
	}
	s1, s2 := x.Value, y.Value
	cells := int64(len(s1)+1) * int64(len(s2)+1)
	if cells*4 > c.sv.cfg.MaxBulk {
		c.w.err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	w := len(s2) + 1
	dp := make([]uint32, cells)
	at := func(i, j int) uint32 { return dp[i*w+j] }
	for i := 1; i <= len(s1); i++ {
		for j := 1; j <= len(s2); j++ {
			if s1[i-1] == s2[j-1] {
				dp[i*w+j] = at(i-1, j-1) + 1
			} else {
				dp[i*w+j] = max(at(i-1, j), at(i, j-1))
			}
		}
	}
	n := int(at(len(s1), len(s2)))
	if getLen {
		c.w.int(int64(n))
		return
	}
	result, ranges := lcsWalk(s1, s2, n, at, minLen)
	if !getIdx {
		c.w.bulk(result)
		return
	}
	c.w.mapHeader(2)
	c.w.bulkString("matches")
	c.w.array(len(ranges))
	for _, r := range ranges {
		c.w.array(2 + map[bool]int{true: 1}[withLen])
		c.w.array(2)
		c.w.int(int64(r.a0))
		c.w.int(int64(r.a1))
		c.w.array(2)
		c.w.int(int64(r.b0))
		c.w.int(int64(r.b1))
		if withLen {
			c.w.int(int64(r.a1 - r.a0 + 1))
		}
	}
	c.w.bulkString("len")
	c.w.int(int64(n))
}

// lcsWalk walks the table back from the end: the common subsequence and
// its runs of at least minLen bytes, last run first.
func lcsWalk(s1, s2 []byte, n int, at func(i, j int) uint32, minLen int64) ([]byte, []lcsRange) {
	result := make([]byte, n)
	var ranges []lcsRange
	idx := n
	i, j := len(s1), len(s2)
	none := len(s1) // no run open
	r := lcsRange{a0: none}
	for i > 0 && j > 0 {
		emit := false
		if s1[i-1] == s2[j-1] {
			result[idx-1] = s1[i-1]
			switch {
			case r.a0 == none:
				r = lcsRange{a0: i - 1, a1: i - 1, b0: j - 1, b1: j - 1}
			case r.a0 == i && r.b0 == j:
				r.a0--
				r.b0--
			default:
				emit = true
			}
			if r.a0 == 0 || r.b0 == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if at(i-1, j) > at(i, j-1) {
				i--
			} else {
				j--
			}
			if r.a0 != none {
				emit = true
			}
		}
		if emit {
			if int64(r.a1-r.a0+1) >= minLen {
				ranges = append(ranges, r)
			}
			r.a0 = none
		}
	}
	return result, ranges
}
