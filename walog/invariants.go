package walog

import (
	"bytes"
	"fmt"
)

// checkEntryAt panics unless the entry at off decodes to seq and p and the
// stage mirrors the tail's line (invariants build only).
func (l *Log) checkEntryAt(off int, seq uint64, p []byte) {
	e, err := l.decode(off, l.hi)
	if err != nil || e.n != len(p) || e.seq != seq {
		panic(fmt.Sprintf("walog: invariant: entry at %d reads back as (%d bytes, seq %d, %v), appended %d bytes, seq %d", off, e.n, e.seq, err, len(p), seq))
	}
	got, err := l.data(off, e.n, nil)
	if err != nil || !bytes.Equal(got, p) {
		panic(fmt.Sprintf("walog: invariant: entry at %d reads back different data (%v)", off, err))
	}
	if l.eLo+l.eN != l.tail || !bytes.Equal(l.stage[:l.eN], l.mem[l.eLo:l.tail]) {
		panic(fmt.Sprintf("walog: invariant: stage [%d, +%d) does not mirror the tail %d", l.eLo, l.eN, l.tail))
	}
}
