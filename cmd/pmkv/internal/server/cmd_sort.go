package server

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// SORT and SORT_RO over lists, sets and sorted sets: numerically or
// ALPHA, BY a pattern (nosort without a '*'), LIMIT, GET # or patterns
// (key*->field reads a hash field), ASC/DESC, STORE as a list.

func init() {
	keyCmd("sort", -2, []string{"write", "denyoom"}, 1, -1, 1, func(c *conn, t *tx, a [][]byte) { cmdSort(c, t, a, true) })
	keyCmd("sort_ro", -2, fReadS, 1, 1, 1, func(c *conn, t *tx, a [][]byte) { cmdSort(c, t, a, false) })
}

type sortArgs struct {
	by            []byte // nil: the elements themselves
	noSort        bool
	offset, count int64
	limited       bool
	gets          [][]byte
	desc, alpha   bool
	store         []byte
}

func parseSort(c *conn, a [][]byte, canStore bool) (sortArgs, bool) {
	var o sortArgs
	for j := 1; j < len(a); j++ {
		left := len(a) - 1 - j
		switch {
		case eq(a[j], "asc"):
			o.desc = false
		case eq(a[j], "desc"):
			o.desc = true
		case eq(a[j], "alpha"):
			o.alpha = true
		case eq(a[j], "limit") && left >= 2:
			off, ok1 := parseInt(a[j+1])
			cnt, ok2 := parseInt(a[j+2])
			if !ok1 || !ok2 {
				c.w.err(errNotInt)
				return o, false
			}
			o.offset, o.count, o.limited = off, cnt, true
			j += 2
		case canStore && eq(a[j], "store") && left >= 1:
			o.store = a[j+1]
			j++
		case eq(a[j], "by") && left >= 1:
			o.by = a[j+1]
			o.noSort = !bytes.Contains(o.by, []byte("*"))
			j++
		case eq(a[j], "get") && left >= 1:
			o.gets = append(o.gets, a[j+1])
			j++
		default:
			c.w.err(errSyntax)
			return o, false
		}
	}
	return o, true
}

// sortElements reads key's elements (zset: in score order).
func sortElements(c *conn, t *tx, key []byte) ([][]byte, bool) {
	e, ok, fail := c.getRaw(t, key)
	if fail {
		return nil, false
	}
	if !ok {
		return nil, true
	}
	k, _ := kindOf(e.Value)
	switch k {
	case kindList:
		l, _, fail := c.getList(t, key)
		return l, !fail
	case kindSet:
		s, _, fail := c.getDict(t, key, kindSet)
		if fail {
			return nil, false
		}
		out := make([][]byte, len(s.keys))
		for i, m := range s.keys {
			out[i] = []byte(m)
		}
		return out, true
	case kindZSet:
		z, _, fail := c.getZSet(t, key)
		if fail {
			return nil, false
		}
		out := make([][]byte, len(z.els))
		for i, el := range z.els {
			out[i] = []byte(el.member)
		}
		return out, true
	}
	c.w.err(errWrongType)
	return nil, false
}

// lookupPattern is the value pattern names for element el: '*' replaced
// by el, "->field" a field of a hash; nil when there is none.
func lookupPattern(t *tx, pattern, el []byte) []byte {
	if bytes.Equal(pattern, []byte("#")) {
		return el
	}
	p := string(pattern)
	star := strings.IndexByte(p, '*')
	if star < 0 {
		return nil
	}
	field := ""
	if arrow := strings.LastIndex(p, "->"); arrow > star && arrow+2 < len(p) {
		p, field = p[:arrow], p[arrow+2:]
	}
	key := []byte(p[:star] + string(el) + p[star+1:])
	e, ok, err := t.get(key)
	if err != nil || !ok {
		return nil
	}
	if field == "" {
		s, _ := DecodeString(e.Value) // nil for a typed value
		return s
	}
	h, err := decodeDict(e.Value, kindHash)
	if err != nil {
		return nil
	}
	v, _ := h.get(field)
	return v
}

func cmdSort(c *conn, t *tx, a [][]byte, canStore bool) {
	o, ok := parseSort(c, a, canStore)
	if !ok {
		return
	}
	els, ok := sortElements(c, t, a[0])
	if !ok {
		return
	}
	if !o.noSort && !sortBy(c, t, els, &o) {
		return
	}
	if o.limited {
		start := min(max(o.offset, 0), int64(len(els)))
		end := int64(len(els))
		if o.count >= 0 {
			end = min(start+o.count, end)
		}
		els = els[start:end]
	}
	var out [][]byte
	for _, el := range els {
		if len(o.gets) == 0 {
			out = append(out, el)
		}
		for _, g := range o.gets {
			out = append(out, lookupPattern(t, g, el))
		}
	}
	if o.store != nil {
		l := make(list, len(out))
		copy(l, out)
		if c.putList(t, o.store, l, 0) {
			c.w.int(int64(len(l)))
		}
		return
	}
	c.w.array(len(out))
	for _, v := range out {
		if v == nil && len(o.gets) > 0 {
			c.w.null()
		} else {
			c.w.bulk(v)
		}
	}
}

// sortBy sorts els in place by themselves or o.by's values.
func sortBy(c *conn, t *tx, els [][]byte, o *sortArgs) bool {
	keys := make([][]byte, len(els))
	nums := make([]float64, len(els))
	for i, el := range els {
		keys[i] = el
		if o.by != nil {
			keys[i] = lookupPattern(t, o.by, el)
		}
		if !o.alpha && keys[i] != nil {
			f, err := strconv.ParseFloat(strings.TrimSpace(string(keys[i])), 64)
			if err != nil {
				c.w.err("ERR One or more scores can't be converted into double")
				return false
			}
			nums[i] = f
		}
	}
	idx := make([]int, len(els))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		r := 0
		if o.alpha {
			r = bytes.Compare(keys[x], keys[y])
		} else {
			switch {
			case nums[x] < nums[y]:
				r = -1
			case nums[x] > nums[y]:
				r = 1
			}
		}
		if r == 0 {
			r = bytes.Compare(els[x], els[y])
		}
		if o.desc {
			r = -r
		}
		return r
	})
	sorted := make([][]byte, len(els))
	for i, j := range idx {
		sorted[i] = els[j]
	}
	copy(els, sorted)
	return true
}
