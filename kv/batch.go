package kv

// Batch collects puts and deletes for Store.Apply. The zero Batch is
// empty and ready to use; it is not safe for concurrent use.
type Batch struct {
	ops []batchOp
	// buf holds the copies of the operations' keys and values: they are
	// appended to one chunk (a new, larger one when it is full; the
	// earlier chunks stay with the operations that point into them), so a
	// Put costs no allocation of its own, and Reset keeps the last chunk
	// for the next operations.
	buf []byte
}

type batchOp struct {
	key, value []byte
	dl         uint64 // deadline (expire.go); 0: none
	del        bool
}

// batchChunk is the smallest chunk of a Batch's copies.
const batchChunk = 4 << 10

// Put adds a put of key = value. The slices are copied.
func (b *Batch) Put(key, value []byte) {
	b.ops = append(b.ops, batchOp{key: b.copyIn(key), value: b.copyIn(value)})
}

// Delete adds a delete of key.
func (b *Batch) Delete(key []byte) {
	b.ops = append(b.ops, batchOp{key: b.copyIn(key), del: true})
}

// Len returns the number of operations in b.
func (b *Batch) Len() int { return len(b.ops) }

// Reset empties b, keeping its memory (the copies of the operations
// before it are overwritten by the next ones).
func (b *Batch) Reset() {
	clear(b.ops) // drop the references to earlier chunks
	b.ops = b.ops[:0]
	b.buf = b.buf[:0]
}

// copyIn returns a copy of p in b's chunk (nil for nil).
func (b *Batch) copyIn(p []byte) []byte {
	if p == nil {
		return nil
	}
	if len(b.buf)+len(p) > cap(b.buf) {
		b.buf = make([]byte, 0, max(batchChunk, 2*cap(b.buf), len(p)))
	}
	n := len(b.buf)
	b.buf = append(b.buf, p...)
	return b.buf[n:len(b.buf):len(b.buf)]
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
