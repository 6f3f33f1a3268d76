package server

import (
	"math"
	"strconv"
	"strings"
)

func init() {
	keyCmd("bitfield", -2, fWrite, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { cmdBitfield(c, t, a, false) })
	keyCmd("bitfield_ro", -2, fReadS, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { cmdBitfield(c, t, a, true) })
}

// The overflow behaviours of BITFIELD.
const (
	ovWrap = iota
	ovSat
	ovFail
)

// bfOp is one GET, SET or INCRBY of a BITFIELD.
type bfOp struct {
	op       string // get, set, incrby
	signed   bool
	bits     int
	off      int64
	arg      int64
	overflow int
}

const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

func parseBitfield(c *conn, a [][]byte, ro bool) ([]bfOp, bool) {
	var ops []bfOp
	overflow := ovWrap
	for i := 1; i < len(a); i++ {
		switch {
		case eq(a[i], "overflow") && i+1 < len(a) && !ro:
			switch {
			case eq(a[i+1], "wrap"):
				overflow = ovWrap
			case eq(a[i+1], "sat"):
				overflow = ovSat
			case eq(a[i+1], "fail"):
				overflow = ovFail
			default:
				c.w.err("ERR Invalid OVERFLOW type specified")
				return nil, false
			}
			i++
		case eq(a[i], "get") && i+2 < len(a), (eq(a[i], "set") || eq(a[i], "incrby")) && i+3 < len(a) && !ro:
			o := bfOp{op: strings.ToLower(string(a[i])), overflow: overflow}
			if len(a[i+1]) < 2 || (a[i+1][0]|0x20 != 'i' && a[i+1][0]|0x20 != 'u') {
				c.w.err(errBitfieldType)
				return nil, false
			}
			o.signed = a[i+1][0]|0x20 == 'i'
			n, err := strconv.Atoi(string(a[i+1][1:]))
			if err != nil || n < 1 || (o.signed && n > 64) || (!o.signed && n > 63) {
				c.w.err(errBitfieldType)
				return nil, false
			}
			o.bits = n
			off := a[i+2]
			mul := int64(1)
			if len(off) > 0 && off[0] == '#' {
				off, mul = off[1:], int64(n)
			}
			v, ok := parseInt(off)
			if !ok || v < 0 || v > math.MaxInt64/mul || (v*mul+int64(n)-1)>>3 >= c.sv.cfg.MaxBulk {
				c.w.err(errBitOffset)
				return nil, false
			}
			o.off = v * mul
			if o.op != "get" {
				if o.arg, ok = parseInt(a[i+3]); !ok {
					c.w.err(errNotInt)
					return nil, false
				}
				i++
			}
			ops = append(ops, o)
			i += 2
		default:
			if ro && (eq(a[i], "set") || eq(a[i], "incrby") || eq(a[i], "overflow")) {
				c.w.err("ERR BITFIELD_RO only supports the GET subcommand")
			} else {
				c.w.err(errSyntax)
			}
			return nil, false
		}
	}
	return ops, true
}

// cmdBitfield runs the operations in order on one copy of the value and
// writes it once if a SET or INCRBY changed it (or made the key).
func cmdBitfield(c *conn, t *tx, a [][]byte, ro bool) {
	ops, ok := parseBitfield(c, a, ro)
	if !ok {
		return
	}
	e, found, fail := c.get(t, a[0])
	if fail {
		return
	}
	v := e.Value
	writes := false
	for _, o := range ops {
		if o.op != "get" {
			need := (o.off+int64(o.bits)-1)>>3 + 1
			if !c.fits(max(int64(len(v)), need)) {
				return
			}
			if need > int64(len(v)) {
				v = append(append([]byte(nil), v...), make([]byte, need-int64(len(v)))...)
			}
			writes = true
		}
	}
	changed := false
	if writes {
		v = append([]byte(nil), v...)
	}
	c.w.array(len(ops))
	for _, o := range ops {
		old := getBits(v, o.off, o.bits)
		if o.op == "get" {
			c.w.int(signExtend(old, o.bits, o.signed))
			continue
		}
		cur := signExtend(old, o.bits, o.signed)
		val, incr := o.arg, int64(0)
		if o.op == "incrby" {
			val, incr = cur, o.arg
		}
		res, over := bitfieldOverflow(val, incr, o.bits, o.signed, o.overflow)
		if over && o.overflow == ovFail {
			c.w.null()
			continue
		}
		setBits(v, o.off, o.bits, uint64(res))
		changed = changed || uint64(res)&mask(o.bits) != old
		if o.op == "set" {
			c.w.int(cur)
		} else {
			c.w.int(res)
		}
	}
	// Redis grows the value to the last SET/INCRBY field before it runs
	// them, so a longer value is written even when they all FAIL.
	if writes && (changed || !found || len(v) > len(e.Value)) {
		t.put(a[0], v, e.Deadline)
	}
}

func mask(bits int) uint64 {
	if bits == 64 {
		return math.MaxUint64
	}
	return 1<<bits - 1
}

// getBits reads bits bits at bit offset off, most significant first
// (bits past the value read as zero).
func getBits(v []byte, off int64, bits int) uint64 {
	var x uint64
	for j := int64(0); j < int64(bits); j++ {
		b := off + j
		bit := uint64(0)
		if b>>3 < int64(len(v)) && v[b>>3]&(1<<(7-b&7)) != 0 {
			bit = 1
		}
		x = x<<1 | bit
	}
	return x
}

func setBits(v []byte, off int64, bits int, x uint64) {
	for j := int64(0); j < int64(bits); j++ {
		b := off + j
		m := byte(1) << (7 - b&7)
		if x>>(int64(bits)-1-j)&1 != 0 {
			v[b>>3] |= m
		} else {
			v[b>>3] &^= m
		}
	}
}

func signExtend(x uint64, bits int, signed bool) int64 {
	if signed && bits < 64 && x&(1<<(bits-1)) != 0 {
		x |= ^mask(bits)
	}
	return int64(x)
}

// bitfieldOverflow is value+incr in a field of bits (Redis's
// check{Signed,Unsigned}BitfieldOverflow): the result after WRAP or SAT,
// and whether it overflowed.
func bitfieldOverflow(value, incr int64, bits int, signed bool, ov int) (int64, bool) {
	wrap := func() int64 {
		c := uint64(value) + uint64(incr)
		if !signed {
			return int64(c & mask(bits))
		}
		return signExtend(c&mask(bits), bits, true)
	}
	if !signed {
		hi := mask(bits)
		u := uint64(value)
		maxIncr, minIncr := int64(hi-u), -value
		switch {
		case u > hi || (incr > 0 && incr > maxIncr):
			if ov == ovSat {
				return int64(hi), true
			}
			return wrap(), true
		case incr < 0 && incr < minIncr:
			if ov == ovSat {
				return 0, true
			}
			return wrap(), true
		}
		return value + incr, false
	}
	hi := int64(math.MaxInt64)
	if bits < 64 {
		hi = 1<<(bits-1) - 1
	}
	lo := -hi - 1
	maxIncr, minIncr := hi-value, lo-value
	switch {
	case value > hi || (bits != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr):
		if ov == ovSat {
			return hi, true
		}
		return wrap(), true
	case value < lo || (bits != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr):
		if ov == ovSat {
			return lo, true
		}
		return wrap(), true
	}
	return value + incr, false
}
