package server

import (
	"fmt"
	"math"
	"strconv"
)

// What the commands of lists, hashes, sets and sorted sets share: reading
// a key as one kind (WRONGTYPE for another), writing a collection back
// (an empty one deletes its key, as in Redis; the key keeps its deadline),
// and the replies of scores.

// typed reads key as a value of kind: ok reports a live one, fail an error
// already answered (a store error, WRONGTYPE).
func (c *conn) typed(t *tx, key []byte, kind int) (e Entry, ok, fail bool) {
	e, ok, fail = c.getRaw(t, key)
	if !ok {
		return e, false, fail
	}
	if k, known := kindOf(e.Value); !known || k != kind {
		if !known {
			c.badValue(key)
		} else {
			c.w.err(errWrongType)
		}
		return e, false, true
	}
	return e, true, false
}

// badValue answers a stored value that does not decode.
func (c *conn) badValue(key []byte) {
	c.w.err(fmt.Sprintf("ERR store: the value of key '%.128s' does not decode (corrupt)", key))
	c.sv.stats.errors.Add(1)
}

// getList reads key as a list (nil, ok=false when absent).
func (c *conn) getList(t *tx, key []byte) (l list, dl int64, fail bool) {
	e, ok, fail := c.typed(t, key, kindList)
	if !ok {
		return nil, 0, fail
	}
	l, err := decodeList(e.Value)
	if err != nil {
		c.badValue(key)
		return nil, 0, true
	}
	return l, e.Deadline, false
}

// getDict reads key as a hash or set (an empty one when absent).
func (c *conn) getDict(t *tx, key []byte, kind int) (h *dict, dl int64, fail bool) {
	e, ok, fail := c.typed(t, key, kind)
	if !ok {
		return newDict(0), 0, fail
	}
	h, err := decodeDict(e.Value, kind)
	if err != nil {
		c.badValue(key)
		return nil, 0, true
	}
	return h, e.Deadline, false
}

// getZSet reads key as a sorted set (an empty one when absent).
func (c *conn) getZSet(t *tx, key []byte) (z *zset, dl int64, fail bool) {
	e, ok, fail := c.typed(t, key, kindZSet)
	if !ok {
		return newZSet(0), 0, fail
	}
	z, err := decodeZSet(e.Value)
	if err != nil {
		c.badValue(key)
		return nil, 0, true
	}
	return z, e.Deadline, false
}

// putTyped writes key's collection of n elements encoded as raw (a
// delete when n is 0); false when raw is over the value limit (answered).
func (c *conn) putTyped(t *tx, key []byte, n int, raw []byte, dl int64) bool {
	if n == 0 {
		t.set(key, nil)
		return true
	}
	if !c.fits(int64(len(raw))) {
		return false
	}
	t.putRaw(key, raw, dl)
	return true
}

func (c *conn) putList(t *tx, key []byte, l list, dl int64) bool {
	return c.putTyped(t, key, len(l), l.encode(), dl)
}

func (c *conn) putDict(t *tx, key []byte, h *dict, kind int, dl int64) bool {
	return c.putTyped(t, key, h.len(), h.encode(kind), dl)
}

func (c *conn) putZSet(t *tx, key []byte, z *zset, dl int64) bool {
	return c.putTyped(t, key, len(z.els), z.encode(), dl)
}

// hasType reports whether key holds a value of type typ ("": any).
func (c *conn) hasType(key []byte, typ string) bool {
	if typ == "" {
		return true
	}
	e, err := c.sv.b.Get(key)
	return err == nil && TypeName(e.Value) == typ
}

// double writes a score: a bulk string in RESP2, a double in RESP3.
func (w *writer) double(f float64) {
	s := formatScore(f)
	if !w.resp3 {
		w.bulkString(s)
		return
	}
	w.b = append(w.b, ',')
	w.b = append(w.b, s...)
	w.b = append(w.b, '\r', '\n')
}

// bulks writes an array of byte strings.
func (w *writer) bulks(vs [][]byte) {
	w.array(len(vs))
	for _, v := range vs {
		w.bulk(v)
	}
}

// intArg parses an integer argument, answering Redis's error.
func (c *conn) intArg(b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok {
		c.w.err(errNotInt)
	}
	return n, ok
}

// countArg parses a non-negative count (LPOP/SPOP/ZPOPMIN ... count).
func (c *conn) countArg(b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok || n < 0 {
		c.w.err("ERR value is out of range, must be positive")
		return 0, false
	}
	return n, true
}

// popCount parses the optional count of LPOP/RPOP/SPOP/ZPOPMIN/ZPOPMAX
// key [count] (1 without it); tooMany is the error for more arguments.
func (c *conn) popCount(a [][]byte, tooMany string) (n int64, withCount, ok bool) {
	if len(a) > 2 {
		c.w.err(tooMany)
		return 0, false, false
	}
	if len(a) < 2 {
		return 1, false, true
	}
	n, ok = c.countArg(a[1])
	return n, true, ok
}

// parseScore parses a score as Redis's strtod does (inf, -inf; no NaN).
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || b[0] == ' ' || b[len(b)-1] == ' ' {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64) // overflow is an error, as in Redis
	return f, err == nil && !math.IsNaN(f)
}

// rangeIndexes turns Redis's start/stop (negative: from the end) over n
// elements into a half-open [lo, hi), empty when lo >= hi.
func rangeIndexes(start, stop int64, n int) (int, int) {
	ln := int64(n)
	if start < 0 {
		start = max(ln+start, 0)
	}
	if stop < 0 {
		stop = ln + stop
	}
	if stop >= ln {
		stop = ln - 1
	}
	if start > stop || start >= ln {
		return 0, 0
	}
	return int(start), int(stop) + 1
}
