package server

// MEMORY USAGE key [SAMPLES n]: the bytes key takes in the store — its
// record (key and stored value, padded to 8 bytes as kv pads records)
// and its 24-byte metadata entry; nil for an absent key.

func init() {
	cmd := keyCmd("memory", -2, fReadS, 2, 2, 1, cmdMemory)
	subs(cmd, map[string]int{"usage": -3, "help": 2})
}

func cmdMemory(c *conn, t *tx, a [][]byte) {
	if eq(a[0], "help") {
		c.w.array(2)
		c.w.simple("MEMORY USAGE <key> [SAMPLES <count>]")
		c.w.simple("HELP")
		return
	}
	if len(a) != 2 && (len(a) != 4 || !eq(a[2], "samples")) {
		c.w.err(errSyntax)
		return
	}
	e, ok, fail := c.getRaw(t, a[1])
	switch {
	case fail:
	case !ok:
		c.w.null()
	default:
		c.w.int(int64((len(a[1])+len(e.Value)+7)&^7 + 24))
	}
}
