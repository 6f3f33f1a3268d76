package server

import (
	"math/bits"
)

func init() {
	keyCmd("setbit", 4, fWrite, 1, 1, 1, cmdSetbit)
	keyCmd("getbit", 3, fRead, 1, 1, 1, cmdGetbit)
	keyCmd("bitcount", -2, fReadS, 1, 1, 1, cmdBitcount)
	keyCmd("bitpos", -3, fReadS, 1, 1, 1, cmdBitpos)
	keyCmd("bitop", -4, fWrite, 2, -1, 1, cmdBitop)
}

// bitOffset parses a bit offset; as Redis, the byte it falls in must be
// below proto-max-bulk-len (MaxBulk: 512 MiB, offsets below 2^32), which
// also bounds what SETBIT allocates for the value it builds.
func bitOffset(c *conn, b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok || n < 0 || n>>3 >= c.sv.cfg.MaxBulk {
		c.w.err(errBitOffset)
		return 0, false
	}
	return n, true
}

func cmdSetbit(c *conn, t *tx, a [][]byte) {
	off, ok := bitOffset(c, a[1])
	if !ok {
		return
	}
	if len(a[2]) != 1 || (a[2][0] != '0' && a[2][0] != '1') {
		c.w.err("ERR bit is not an integer or out of range")
		return
	}
	e, _, fail := c.get(t, a[0])
	if fail {
		return
	}
	byteAt := off >> 3
	if !c.fits(max(int64(len(e.Value)), byteAt+1)) {
		return
	}
	v := make([]byte, max(int64(len(e.Value)), byteAt+1))
	copy(v, e.Value)
	mask := byte(1) << (7 - off&7)
	old := int64(0)
	if v[byteAt]&mask != 0 {
		old = 1
	}
	if a[2][0] == '1' {
		v[byteAt] |= mask
	} else {
		v[byteAt] &^= mask
	}
	t.put(a[0], v, e.Deadline)
	c.w.int(old)
}

func cmdGetbit(c *conn, t *tx, a [][]byte) {
	off, ok := bitOffset(c, a[1])
	if !ok {
		return
	}
	e, _, fail := c.get(t, a[0])
	if fail {
		return
	}
	if off>>3 >= int64(len(e.Value)) || e.Value[off>>3]&(1<<(7-off&7)) == 0 {
		c.w.int(0)
	} else {
		c.w.int(1)
	}
}

// bitRange parses [start end [BYTE|BIT]] into a bit range of v, as
// BITCOUNT and BITPOS do; empty when start > end.
func bitRange(c *conn, a [][]byte, n int64, needEnd bool) (lo, hi int64, endGiven, ok bool) {
	isBit := false
	switch {
	case len(a) == 3:
		switch {
		case eq(a[2], "bit"):
			isBit = true
		case eq(a[2], "byte"):
		default:
			c.w.err(errSyntax)
			return 0, 0, false, false
		}
	case len(a) > 3:
		c.w.err(errSyntax)
		return 0, 0, false, false
	case len(a) == 1 && needEnd:
		c.w.err(errSyntax)
		return 0, 0, false, false
	}
	total := n
	if isBit {
		total = n * 8
	}
	start, end := int64(0), total-1
	if len(a) >= 1 {
		var ok1 bool
		if start, ok1 = parseInt(a[0]); !ok1 {
			c.w.err(errNotInt)
			return 0, 0, false, false
		}
	}
	if len(a) >= 2 {
		var ok2 bool
		if end, ok2 = parseInt(a[1]); !ok2 {
			c.w.err(errNotInt)
			return 0, 0, false, false
		}
		endGiven = true
	}
	if start < 0 && end < 0 && start > end {
		return 0, -1, endGiven, true // empty, as Redis answers it
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, total-1)
	if !isBit {
		start, end = start*8, end*8+7
	}
	return start, end, endGiven, true
}

func cmdBitcount(c *conn, t *tx, a [][]byte) {
	e, _, fail := c.get(t, a[0])
	if fail {
		return
	}
	lo, hi, _, ok := bitRange(c, a[1:], int64(len(e.Value)), true)
	if !ok {
		return
	}
	n := int64(0)
	for i := lo; i <= hi; {
		if i&7 == 0 && i+7 <= hi {
			n += int64(bits.OnesCount8(e.Value[i>>3]))
			i += 8
			continue
		}
		if e.Value[i>>3]&(1<<(7-i&7)) != 0 {
			n++
		}
		i++
	}
	c.w.int(n)
}

func cmdBitpos(c *conn, t *tx, a [][]byte) {
	if len(a[1]) != 1 || (a[1][0] != '0' && a[1][0] != '1') {
		c.w.err("ERR The bit argument must be 1 or 0.")
		return
	}
	want := a[1][0] == '1'
	e, found, fail := c.get(t, a[0])
	if fail {
		return
	}
	lo, hi, endGiven, ok := bitRange(c, a[2:], int64(len(e.Value)), false)
	if !ok {
		return
	}
	if !found {
		if want {
			c.w.int(-1)
		} else {
			c.w.int(0)
		}
		return
	}
	if lo > hi {
		c.w.int(-1)
		return
	}
	skip := byte(0)
	if !want {
		skip = 0xff
	}
	for i := lo; i <= hi; {
		if i&7 == 0 && i+7 <= hi && e.Value[i>>3] == skip {
			i += 8
			continue
		}
		if (e.Value[i>>3]&(1<<(7-i&7)) != 0) == want {
			c.w.int(i)
			return
		}
		i++
	}
	if want || endGiven {
		c.w.int(-1)
	} else {
		c.w.int(hi + 1)
	}
}

func cmdBitop(c *conn, t *tx, a [][]byte) {
	op := a[0]
	if !eq(op, "and") && !eq(op, "or") && !eq(op, "xor") && !eq(op, "not") {
		c.w.err(errSyntax)
		return
	}
	if eq(op, "not") && len(a) != 3 {
		c.w.err("ERR BITOP NOT must be called with a single source key.")
		return
	}
	srcs := make([][]byte, 0, len(a)-2)
	n := 0
	for _, k := range a[2:] {
		e, _, fail := c.get(t, k)
		if fail {
			return
		}
		srcs = append(srcs, e.Value)
		n = max(n, len(e.Value))
	}
	if n == 0 {
		if _, err := t.del(a[1]); err != nil {
			c.storeErr(err)
			return
		}
		c.w.int(0)
		return
	}
	res := make([]byte, n)
	copy(res, srcs[0])
	for i := range res {
		var b byte
		if i < len(srcs[0]) {
			b = srcs[0][i]
		}
		for _, s := range srcs[1:] {
			var x byte
			if i < len(s) {
				x = s[i]
			}
			switch {
			case eq(op, "and"):
				b &= x
			case eq(op, "or"):
				b |= x
			default:
				b ^= x
			}
		}
		if eq(op, "not") {
			b = ^b
		}
		res[i] = b
	}
	t.put(a[1], res, 0)
	c.w.int(int64(n))
}
