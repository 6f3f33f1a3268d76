package server

import (
	"encoding/binary"
	"math"
)

// DUMP and RESTORE use Redis's serialized form: an RDB value, the RDB
// version (2 bytes) and a CRC-64 (Jones, as Redis's crc64.c) of both. A
// string is RDB type 0, so a string moves between pmkv and Redis both
// ways (except Redis's LZF-compressed strings, refused as a bad format);
// a list, hash, set or sorted set is pmkv's own typed value under type
// byte rdbTypePmkv, which only pmkv restores.

func init() {
	keyCmd("dump", 2, []string{"readonly"}, 1, 1, 1, cmdDump)
	keyCmd("restore", -4, fWrite, 1, 1, 1, cmdRestore)
}

const (
	rdbVersion    = 10 // Redis 7.0's
	rdbTypeString = 0
	rdbTypePmkv   = 0xF0 // not an RDB type: pmkv's typed values
)

var crc64Table = func() (t [256]uint64) {
	const poly = 0x95ac9329ac4bc9b5 // Jones, reflected
	for i := range t {
		c := uint64(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc64 is Redis's CRC-64 (no initial or final inversion).
func crc64(crc uint64, p []byte) uint64 {
	for _, b := range p {
		crc = crc64Table[byte(crc)^b] ^ crc>>8
	}
	return crc
}

// rdbLen appends n as an RDB length.
func rdbLen(b []byte, n int) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case uint64(n) <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, 0x81), uint64(n))
	}
}

// dumpValue serializes a stored value.
func dumpValue(raw []byte) []byte {
	var b []byte
	if s, ok := DecodeString(raw); ok {
		b = rdbLen(append(b, rdbTypeString), len(s))
		b = append(b, s...)
	} else {
		b = rdbLen(append(b, rdbTypePmkv), len(raw))
		b = append(b, raw...)
	}
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	return binary.LittleEndian.AppendUint64(b, crc64(0, b))
}

// undumpValue is the stored value of a serialized one (ok false: a
// version, checksum or format it does not take).
func undumpValue(p []byte) ([]byte, bool) {
	if len(p) < 11 {
		return nil, false
	}
	body, foot := p[:len(p)-10], p[len(p)-10:]
	if binary.LittleEndian.Uint16(foot) > rdbVersion ||
		binary.LittleEndian.Uint64(foot[2:]) != crc64(0, p[:len(p)-8]) {
		return nil, false
	}
	typ, rest := body[0], body[1:]
	if typ != rdbTypeString && typ != rdbTypePmkv {
		return nil, false
	}
	v, rest, ok := rdbString(rest)
	if !ok || len(rest) != 0 {
		return nil, false
	}
	if typ == rdbTypeString {
		return EncodeString(v), true
	}
	if k, ok := kindOf(v); !ok || k == kindStr {
		return nil, false
	}
	return v, true
}

// rdbString reads an RDB string: a length and bytes, or an integer
// encoding (0xC0 int8, 0xC1 int16, 0xC2 int32).
func rdbString(p []byte) (s, rest []byte, ok bool) {
	if len(p) == 0 {
		return nil, nil, false
	}
	var n uint64
	switch p[0] >> 6 {
	case 0:
		n, p = uint64(p[0]&0x3f), p[1:]
	case 1:
		if len(p) < 2 {
			return nil, nil, false
		}
		n, p = uint64(p[0]&0x3f)<<8|uint64(p[1]), p[2:]
	case 2:
		switch {
		case p[0] == 0x80 && len(p) >= 5:
			n, p = uint64(binary.BigEndian.Uint32(p[1:])), p[5:]
		case p[0] == 0x81 && len(p) >= 9:
			n, p = binary.BigEndian.Uint64(p[1:]), p[9:]
		default:
			return nil, nil, false
		}
	default:
		var v int64
		switch {
		case p[0] == 0xC0 && len(p) >= 2:
			v, p = int64(int8(p[1])), p[2:]
		case p[0] == 0xC1 && len(p) >= 3:
			v, p = int64(int16(binary.LittleEndian.Uint16(p[1:]))), p[3:]
		case p[0] == 0xC2 && len(p) >= 5:
			v, p = int64(int32(binary.LittleEndian.Uint32(p[1:]))), p[5:]
		default:
			return nil, nil, false // 0xC3: LZF, not taken
		}
		return []byte(itoa(v)), p, true
	}
	if n > uint64(len(p)) {
		return nil, nil, false
	}
	return p[:n], p[n:], true
}

func cmdDump(c *conn, t *tx, a [][]byte) {
	e, ok, fail := c.getRaw(t, a[0])
	switch {
	case fail:
	case !ok:
		c.w.null()
	default:
		c.w.bulk(dumpValue(e.Value))
	}
}

// cmdRestore: RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s]
// [FREQ f]; a relative ttl is propagated as an absolute one with ABSTTL.
func cmdRestore(c *conn, t *tx, a [][]byte) {
	replace, abs := false, false
	for i := 3; i < len(a); i++ {
		switch {
		case eq(a[i], "replace"):
			replace = true
		case eq(a[i], "absttl"):
			abs = true
		case (eq(a[i], "idletime") || eq(a[i], "freq")) && i+1 < len(a):
			if n, ok := parseInt(a[i+1]); !ok || n < 0 {
				c.w.err("ERR Invalid " + string(a[i]) + " value, must be >= 0")
				return
			}
			i++
		default:
			c.w.err(errSyntax)
			return
		}
	}
	ttl, ok := parseInt(a[1])
	switch {
	case !ok:
		c.w.err(errNotInt)
		return
	case ttl < 0:
		c.w.err("ERR Invalid TTL value, must be >= 0")
		return
	}
	_, exists, fail := c.getRaw(t, a[0])
	if fail {
		return
	}
	if exists && !replace {
		c.w.err("BUSYKEY Target key name already exists.")
		return
	}
	v, ok := undumpValue(a[2])
	if !ok {
		c.w.err("ERR DUMP payload version or checksum are wrong")
		return
	}
	dl := ttl
	if ttl != 0 && !abs {
		if ttl > math.MaxInt64-t.now {
			c.w.err("ERR Invalid TTL value, must be >= 0")
			return
		}
		dl = t.now + ttl
	}
	if dl != 0 && dl <= t.now {
		if exists {
			t.set(a[0], nil)
			t.propagate([]byte("DEL"), a[0])
		} else {
			t.propagate()
		}
		c.w.ok()
		return
	}
	t.putRaw(a[0], v, dl)
	if ttl != 0 && !abs {
		args := append([][]byte{[]byte("restore"), a[0], msArg(dl)}, a[2:]...)
		t.propagate(append(args, []byte("ABSTTL"))...)
	}
	c.w.ok()
}
