package server

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/braid-pm/braid/persist"
)

// The value codec. A key's kv value is either a string or a typed value
// (list, hash, set, sorted set), told apart by the first byte:
//
//	first byte != 0xFF   a string, the value's bytes as they are
//	0xFF 0x00 s          a string s that itself begins with 0xFF (escaped)
//	0xFF kind 0x01 body  a list (1), hash (2), set (3) or sorted set (4),
//	                     version 1
//
// The server (tx.put) and pmkv put escape every string that begins with
// 0xFF, so a string never reads as a typed value: 0xFF never occurs in
// UTF-8 text, and binary strings that begin with it pay two bytes. A body
// is a uvarint element count, then per element uvarint-length-prefixed
// bytes: list and set members; hash field, value; sorted-set member
// preceded by its score (float64, 8 bytes little-endian), the elements in
// (score, member) order. kv's CRC covers the whole value; the decoder
// still checks every length, and reports anything that does not parse as
// corrupt, never as data.
const (
	tagByte   = 0xFF
	kindStr   = 0
	kindList  = 1
	kindHash  = 2
	kindSet   = 3
	kindZSet  = 4
	codecVers = 1
)

const errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

// errBadValue is a typed value that does not decode.
var errBadValue = fmt.Errorf("server: value does not decode: %w", persist.ErrCorrupt)

var kindNames = [...]string{kindStr: "string", kindList: "list", kindHash: "hash", kindSet: "set", kindZSet: "zset"}

// kindOf is raw's kind (kindStr for strings, escaped or not); ok is false
// for a 0xFF value of no known kind.
func kindOf(raw []byte) (int, bool) {
	if len(raw) == 0 || raw[0] != tagByte {
		return kindStr, true
	}
	if len(raw) < 2 || int(raw[1]) >= len(kindNames) {
		return 0, false
	}
	if raw[1] == kindStr {
		return kindStr, true
	}
	if len(raw) < 3 || raw[2] != codecVers {
		return 0, false
	}
	return int(raw[1]), true
}

// TypeName is TYPE's answer for a stored value: string, list, hash, set,
// zset (or "unknown" for a 0xFF value of no known kind).
func TypeName(raw []byte) string {
	k, ok := kindOf(raw)
	if !ok {
		return "unknown"
	}
	return kindNames[k]
}

// DecodeString returns the string a stored value holds; ok is false when
// it holds a typed value (TypeName names it).
func DecodeString(raw []byte) ([]byte, bool) {
	if len(raw) == 0 || raw[0] != tagByte {
		return raw, true
	}
	if len(raw) >= 2 && raw[1] == kindStr {
		return raw[2:], true
	}
	return nil, false
}

// EncodeString is the stored form of string s.
func EncodeString(s []byte) []byte {
	if len(s) == 0 || s[0] != tagByte {
		return s
	}
	return append([]byte{tagByte, kindStr}, s...)
}

// elements decodes a typed value's body of kind: n elements of per
// fields each (a sorted set's score counts as a field).
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) score() float64 {
	if len(d.b) < 8 {
		d.bad = true
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	if math.IsNaN(f) {
		d.bad = true
	}
	return f
}

// open checks raw's header for kind and returns the decoder of its body
// and its element count.
func open(raw []byte, kind int) (*decoder, int, error) {
	k, ok := kindOf(raw)
	if !ok || k != kind {
		return nil, 0, errBadValue
	}
	d := &decoder{b: raw[3:]}
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) { // every element takes a byte at least
		return nil, 0, errBadValue
	}
	return d, int(n), nil
}

func (d *decoder) done() error {
	if d.bad || len(d.b) != 0 {
		return errBadValue
	}
	return nil
}

// encoder builds a typed value.
type encoder struct{ b []byte }

func newEncoder(kind, n, size int) *encoder {
	e := &encoder{b: make([]byte, 0, 3+binary.MaxVarintLen64+size)}
	e.b = append(e.b, tagByte, byte(kind), codecVers)
	e.b = binary.AppendUvarint(e.b, uint64(n))
	return e
}

func (e *encoder) bytes(p []byte) {
	e.b = binary.AppendUvarint(e.b, uint64(len(p)))
	e.b = append(e.b, p...)
}

func (e *encoder) score(f float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(f))
}

// A list is its elements in order.
type list [][]byte

func decodeList(raw []byte) (list, error) {
	d, n, err := open(raw, kindList)
	if err != nil {
		return nil, err
	}
	l := make(list, 0, n)
	for range n {
		l = append(l, d.bytes())
	}
	return l, d.done()
}

func (l list) encode() []byte {
	size := 0
	for _, v := range l {
		size += len(v) + binary.MaxVarintLen32
	}
	e := newEncoder(kindList, len(l), size)
	for _, v := range l {
		e.bytes(v)
	}
	return e.b
}

// A dict is a hash (fields with values) or a set (members, nil values),
// in insertion order.
type dict struct {
	keys []string
	vals [][]byte
	idx  map[string]int
}

func newDict(n int) *dict { return &dict{idx: make(map[string]int, n)} }

func decodeDict(raw []byte, kind int) (*dict, error) {
	d, n, err := open(raw, kind)
	if err != nil {
		return nil, err
	}
	h := newDict(n)
	for range n {
		k := d.bytes()
		var v []byte
		if kind == kindHash {
			v = d.bytes()
		}
		if d.bad {
			break
		}
		if _, dup := h.idx[string(k)]; dup {
			return nil, errBadValue
		}
		h.set(string(k), v)
	}
	return h, d.done()
}

func (h *dict) encode(kind int) []byte {
	size := 0
	for i, k := range h.keys {
		size += len(k) + len(h.vals[i]) + 2*binary.MaxVarintLen32
	}
	e := newEncoder(kind, len(h.keys), size)
	for i, k := range h.keys {
		e.bytes([]byte(k))
		if kind == kindHash {
			e.bytes(h.vals[i])
		}
	}
	return e.b
}

func (h *dict) len() int { return len(h.keys) }

func (h *dict) get(k string) ([]byte, bool) {
	i, ok := h.idx[k]
	if !ok {
		return nil, false
	}
	return h.vals[i], true
}

// set sets k to v, reporting whether k is new.
func (h *dict) set(k string, v []byte) bool {
	if i, ok := h.idx[k]; ok {
		h.vals[i] = v
		return false
	}
	h.idx[k] = len(h.keys)
	h.keys = append(h.keys, k)
	h.vals = append(h.vals, v)
	return true
}

// del removes the keys in ks, reporting how many were there.
func (h *dict) del(ks ...string) int {
	n := 0
	for _, k := range ks {
		if _, ok := h.idx[k]; ok {
			delete(h.idx, k)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	keys, vals := h.keys[:0], h.vals[:0]
	for i, k := range h.keys {
		if _, ok := h.idx[k]; ok {
			h.idx[k] = len(keys)
			keys = append(keys, k)
			vals = append(vals, h.vals[i])
		}
	}
	clear(h.keys[len(keys):])
	clear(h.vals[len(vals):])
	h.keys, h.vals = keys, vals
	return n
}

// A zset is a sorted set: its elements in (score, member) order and an
// index by member.
type zset struct {
	els   []zel
	score map[string]float64
}

type zel struct {
	score  float64
	member string
}

func zless(a, b zel) int {
	switch {
	case a.score < b.score:
		return -1
	case a.score > b.score:
		return 1
	case a.member < b.member:
		return -1
	case a.member > b.member:
		return 1
	}
	return 0
}

func newZSet(n int) *zset { return &zset{score: make(map[string]float64, n)} }

func decodeZSet(raw []byte) (*zset, error) {
	d, n, err := open(raw, kindZSet)
	if err != nil {
		return nil, err
	}
	z := newZSet(n)
	z.els = make([]zel, 0, n)
	for range n {
		s := d.score()
		m := d.bytes()
		if d.bad {
			break
		}
		el := zel{s, string(m)}
		if _, dup := z.score[el.member]; dup || (len(z.els) > 0 && zless(z.els[len(z.els)-1], el) >= 0) {
			return nil, errBadValue
		}
		z.els = append(z.els, el)
		z.score[el.member] = s
	}
	return z, d.done()
}

func (z *zset) encode() []byte {
	size := 0
	for _, el := range z.els {
		size += len(el.member) + 8 + binary.MaxVarintLen32
	}
	e := newEncoder(kindZSet, len(z.els), size)
	for _, el := range z.els {
		e.score(el.score)
		e.bytes([]byte(el.member))
	}
	return e.b
}

// rank is the index of member's element (or where it would go).
func (z *zset) rank(el zel) (int, bool) {
	return slices.BinarySearchFunc(z.els, el, zless)
}

// add sets member's score, reporting whether it is new.
func (z *zset) add(member string, s float64) bool {
	old, had := z.score[member]
	if had {
		if old == s {
			return false
		}
		i, _ := z.rank(zel{old, member})
		z.els = slices.Delete(z.els, i, i+1)
	}
	z.score[member] = s
	i, _ := z.rank(zel{s, member})
	z.els = slices.Insert(z.els, i, zel{s, member})
	return !had
}

func (z *zset) rem(member string) bool {
	s, ok := z.score[member]
	if !ok {
		return false
	}
	i, _ := z.rank(zel{s, member})
	z.els = slices.Delete(z.els, i, i+1)
	delete(z.score, member)
	return true
}

// formatScore is a double as Redis 7.0 replies it (%.17g, inf, -inf).
func formatScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// encodingLimits are the thresholds under which Redis keeps a small
// encoding (its CONFIG settings of the same names).
type encodingLimits struct{ hashEntries, zsetEntries, intsetEntries int }

var defaultLimits = encodingLimits{hashEntries: 128, zsetEntries: 128, intsetEntries: 512}

// EncodingName is OBJECT ENCODING's answer for a stored value at Redis's
// default thresholds (Server.encoding: at the CONFIG SET ones). pmkv keeps
// one encoding per type (the codec above), so it names the encoding Redis
// 7.0 would use for the same content (hash and zset: listpack up to the
// entries limit, members of at most 64 bytes; set: intset up to its
// limit of integers; lists: quicklist; strings: int, embstr up to 44
// bytes, raw), which is what clients and tests that read it expect.
func EncodingName(raw []byte) string { return encodingName(raw, defaultLimits) }

func encodingName(raw []byte, lim encodingLimits) string {
	k, ok := kindOf(raw)
	if !ok {
		return "unknown"
	}
	switch k {
	case kindList:
		return "quicklist"
	case kindHash:
		if h, err := decodeDict(raw, kindHash); err == nil && h.len() <= lim.hashEntries && smallDict(h) {
			return "listpack"
		}
		return "hashtable"
	case kindSet:
		if s, err := decodeDict(raw, kindSet); err == nil && s.len() <= lim.intsetEntries && intDict(s) {
			return "intset"
		}
		return "hashtable"
	case kindZSet:
		if z, err := decodeZSet(raw); err == nil && len(z.els) <= lim.zsetEntries && smallZSet(z) {
			return "listpack"
		}
		return "skiplist"
	}
	s, _ := DecodeString(raw)
	switch _, isInt := parseInt(s); {
	case isInt:
		return "int"
	case len(s) <= 44:
		return "embstr"
	}
	return "raw"
}

// encoding is OBJECT ENCODING's answer at the CONFIG SET thresholds.
func (sv *Server) encoding(raw []byte) string {
	cf := sv.configs()
	n := func(name string, def int) int {
		v, err := strconv.Atoi(cf[name])
		if err != nil {
			return def
		}
		return v
	}
	return encodingName(raw, encodingLimits{
		hashEntries:   n("hash-max-ziplist-entries", defaultLimits.hashEntries),
		zsetEntries:   n("zset-max-ziplist-entries", defaultLimits.zsetEntries),
		intsetEntries: n("set-max-intset-entries", defaultLimits.intsetEntries),
	})
}

func smallDict(h *dict) bool {
	for i, k := range h.keys {
		if len(k) > 64 || len(h.vals[i]) > 64 {
			return false
		}
	}
	return true
}

func intDict(h *dict) bool {
	for _, k := range h.keys {
		if _, ok := parseInt([]byte(k)); !ok {
			return false
		}
	}
	return true
}

func smallZSet(z *zset) bool {
	for _, el := range z.els {
		if len(el.member) > 64 {
			return false
		}
	}
	return true
}
