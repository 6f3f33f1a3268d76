package walog

import (
	"bytes"
	"fmt"
)

// checkEntryAt panics unless the entry at off decodes to seq and p and the
// stage mirrors the tail's line (invariants build only).
func (l *Log) checkEntryAt(off int, seq uint64, p []byte) {
	n, s, _, err := l.decode(off, l.hi)
	if err != nil || n != len(p) || s != seq {
		panic(fmt.Sprintf("walog: invariant: entry at %d reads back as (%d bytes, seq %d, %v), appended %d bytes, seq %d", off, n, s, err, len(p), seq))
	}
	got, err := l.data(off, n, nil)
	if err != nil || !bytes.Equal(got, p) {
		panic(fmt.Sprintf("walog: invariant: entry at %d reads back different data (%v)", off, err))
	}
	if l.eLo+l.eN != l.tail || !bytes.Equal(l.stage[:l.eN], l.mem[l.eLo:l.tail]) {
		panic(fmt.Sprintf("walog: invariant: stage [%d, +%d) does not mirror the tail %d", l.eLo, l.eN, l.tail))
	}
}
