package server

// keyMap is the Backend under the server's keys: Redis takes the empty
// key, kv does not (a key length of 0 marks free space in its logs), so
// the server stores
//
//	""          as "\x00"
//	"\x00" + k  as "\x00\x00" + k
//	any other k as k
//
// which is one-to-one and keeps key order (SCAN's cursors rely on it).
// Only keys that begin with a zero byte pay a byte; pmkv get and put see
// the stored form.
type keyMap struct{ b Backend }

func storedKey(k []byte) []byte {
	if len(k) == 0 || k[0] == 0 {
		return append([]byte{0}, k...)
	}
	return k
}

func userKey(k []byte) []byte {
	if len(k) > 0 && k[0] == 0 {
		return k[1:]
	}
	return k
}

func (m keyMap) Get(key []byte) (Entry, error) { return m.b.Get(storedKey(key)) }

func (m keyMap) Apply(ops []Op) error {
	for i := range ops {
		ops[i].Key = storedKey(ops[i].Key)
	}
	return m.b.Apply(ops)
}

func (m keyMap) Scan(from []byte, fn func(key []byte) bool) error {
	if from != nil {
		from = storedKey(from)
	}
	return m.b.Scan(from, func(k []byte) bool { return fn(userKey(k)) })
}

func (m keyMap) Stats() Stats { return m.b.Stats() }
