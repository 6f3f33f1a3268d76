package server

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

func init() {
	dbg := connCmd("debug", -2, []string{"admin", "noscript", "loading", "stale"}, cmdDebug)
	subs(dbg, map[string]int{"set-active-expire": 3, "sleep": 3, "help": 2, "quicklist-packed-threshold": 3,
		"jmap": 2, "protocol": 3, "object": 3, "reload": -2, "loadaof": 2, "change-repl-id": 2, "digest-value": -2, "digest": 2})
	obj := keyCmd("object", -2, []string{"readonly"}, 2, 2, 1, cmdObject)
	subs(obj, map[string]int{"encoding": 3, "refcount": 3, "help": 2})
}

// cmdDebug answers the DEBUG subcommands Redis's tests use. RELOAD and
// LOADAOF answer OK without doing anything: every acknowledged write is
// already durable in the store, so there is nothing to save or load.
func cmdDebug(c *conn, a [][]byte) {
	switch strings.ToLower(string(a[0])) {
	case "sleep":
		f, err := strconv.ParseFloat(string(a[1]), 64)
		if err != nil || f < 0 || f > 60 {
			c.w.err("ERR invalid sleep time (0 to 60 seconds)")
			return
		}
		time.Sleep(time.Duration(f * float64(time.Second)))
		c.w.ok()
	case "protocol":
		debugProtocol(c, strings.ToLower(string(a[1])))
	case "change-repl-id":
		c.sv.repl.mu.Lock()
		c.sv.replID = newReplID()
		c.sv.repl.mu.Unlock()
		c.w.ok()
	case "digest-value":
		t := c.sv.newTx()
		c.w.array(len(a) - 1)
		for _, k := range a[1:] {
			e, ok, err := t.get(k)
			if err != nil {
				c.storeErr(err)
				return
			}
			c.w.bulkString(digest(e, ok))
		}
	case "digest":
		debugDigest(c)
	case "object":
		debugObject(c, a[1])
	case "help":
		c.w.array(1)
		c.w.simple("DEBUG <subcommand>: SLEEP PROTOCOL RELOAD LOADAOF DIGEST DIGEST-VALUE CHANGE-REPL-ID SET-ACTIVE-EXPIRE JMAP QUICKLIST-PACKED-THRESHOLD")
	default:
		c.w.ok()
	}
}

func newReplID() string {
	return fmt.Sprintf("%016x%016x%08x", rand.Uint64(), rand.Uint64(), rand.Uint32())
}

// digest is a value's SHA-1 in hex, 40 zeros for no value, as Redis's
// DEBUG DIGEST-VALUE (whose hash is its own: equal values, equal digests).
func digest(e Entry, ok bool) string {
	if !ok {
		return strings.Repeat("0", 40)
	}
	h := sha1.Sum(e.Value)
	return hex.EncodeToString(h[:])
}

// debugObject describes key's value as Redis's DEBUG OBJECT does. pmkv
// has no object heap: at: is a hash of the key's current version (key,
// value, deadline), so it changes with every write (pmkv writes a new
// version where Redis may modify in place).
func debugObject(c *conn, key []byte) {
	e, ok, err := c.sv.newTx().get(key)
	switch {
	case err != nil:
		c.storeErr(err)
	case !ok:
		c.w.err("ERR no such key")
	default:
		h := fnv.New64a()
		h.Write(key)
		h.Write([]byte{0})
		h.Write(e.Value)
		h.Write(strconv.AppendInt(nil, e.Deadline, 10))
		c.w.simple(fmt.Sprintf("Value at:%016x refcount:1 encoding:%s serializedlength:%d",
			h.Sum64(), c.sv.encoding(e.Value), len(dumpValue(e.Value))-10))
	}
}

// debugDigest is the XOR of every key's SHA-1 of key, value and deadline
// (40 zeros for an empty store).
func debugDigest(c *conn) {
	var sum [sha1.Size]byte
	t := c.sv.newTx()
	var keys [][]byte
	if err := c.sv.b.Scan(nil, func(k []byte) bool {
		keys = append(keys, append([]byte(nil), k...))
		return true
	}); err != nil {
		c.storeErr(err)
		return
	}
	for _, k := range keys {
		e, ok, err := t.get(k)
		if err != nil {
			c.storeErr(err)
			return
		}
		if !ok {
			continue
		}
		h := sha1.New()
		h.Write(k)
		h.Write([]byte{0})
		h.Write(e.Value)
		h.Write(strconv.AppendInt(nil, e.Deadline, 10))
		for i, b := range h.Sum(nil) {
			sum[i] ^= b
		}
	}
	c.w.simple(hex.EncodeToString(sum[:]))
}

// debugProtocol answers DEBUG PROTOCOL's samples of each reply type.
func debugProtocol(c *conn, name string) {
	switch name {
	case "string":
		c.w.bulkString("Hello World")
	case "integer":
		c.w.int(12345)
	case "double":
		c.w.double(3.141)
	case "bignum":
		c.w.bigNumber("1234567999999999999999999999999999999")
	case "null":
		c.w.null()
	case "array":
		c.w.array(3)
		for j := range 3 {
			c.w.int(int64(j))
		}
	case "set":
		c.w.setHeader(3)
		for j := range 3 {
			c.w.int(int64(j))
		}
	case "map":
		c.w.mapHeader(3)
		for j := range 3 {
			c.w.int(int64(j))
			c.w.boolean(j == 1)
		}
	case "attrib":
		if c.w.resp3 {
			c.w.attribute(1)
			c.w.bulkString("key-popularity")
			c.w.array(2)
			c.w.bulkString("key:123")
			c.w.int(90)
		}
		c.w.bulkString("Some real reply following the attribute")
	case "push":
		if !c.w.resp3 {
			c.w.err("ERR RESP2 is not supported by this command")
			return
		}
		c.w.header('>', 2)
		c.w.bulkString("server-cpu-usage")
		c.w.int(42)
		c.w.bulkString("Some real reply following the push reply")
	case "true", "false":
		c.w.boolean(name == "true")
	case "verbatim":
		c.w.verbatim("This is a verbatim\nstring")
	default:
		c.w.err("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// cmdObject answers OBJECT ENCODING with the encoding Redis would give
// the value (pmkv keeps every value as bytes in the store; a string is
// int, embstr or raw by its content and length) and REFCOUNT with 1
// (nothing is shared).
func cmdObject(c *conn, t *tx, a [][]byte) {
	if eq(a[0], "help") {
		c.w.array(2)
		c.w.simple("OBJECT <subcommand>: ENCODING <key> | REFCOUNT <key>")
		c.w.simple("HELP")
		return
	}
	e, ok, err := t.get(a[1])
	switch {
	case err != nil:
		c.storeErr(err)
	case !ok:
		c.w.null()
	case eq(a[0], "encoding"):
		c.w.bulkString(c.sv.encoding(e.Value))
	default:
		c.w.int(1)
	}
}
