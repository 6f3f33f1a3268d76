package kv

// Batch collects puts and deletes for Store.Apply. The zero Batch is
// empty and ready to use; it is not safe for concurrent use.
type Batch struct {
	ops []batchOp
}

type batchOp struct {
	key, value []byte
	del        bool
}

// Put adds a put of key = value. The slices are copied.
func (b *Batch) Put(key, value []byte) {
	b.ops = append(b.ops, batchOp{key: clone(key), value: clone(value)})
}

// Delete adds a delete of key.
func (b *Batch) Delete(key []byte) {
	b.ops = append(b.ops, batchOp{key: clone(key), del: true})
}

// Len returns the number of operations in b.
func (b *Batch) Len() int { return len(b.ops) }

// Reset empties b, keeping its memory.
func (b *Batch) Reset() { b.ops = b.ops[:0] }

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
