package pagelog

// Test hooks: the deliberately broken orderings the crash tests show the
// simulator catching.

// Broken variants by name.
var brokenByName = map[string]broken{
	"pvn-before-pid":           brokenPVNFirst,
	"no-payload-fence":         brokenNoPayloadFence,
	"microlog-no-log-fence":    brokenNoLogFence,
	"microlog-no-invalidate":   brokenNoInvalidate,
	"checksum-no-backup-fence": brokenNoBackupFence,
}

// SetBroken switches s to the named broken ordering.
func SetBroken(s *Store, name string) {
	b, ok := brokenByName[name]
	if !ok {
		panic("pagelog: no broken variant " + name)
	}
	s.broken = b
}

// DecodeHeader exposes the slot-header decoder to the fuzz target.
func DecodeHeader(layout Layout, pages, slots, pidBits, i int, h []byte) (used bool, pid, ver uint64, err error) {
	g, err := newGeometry(layout, MinPageSize, pages, slots, pidBits)
	if err != nil {
		return false, 0, 0, err
	}
	if len(h) < g.hdrSize {
		return false, 0, 0, ErrInvalid
	}
	hd, err := g.decodeHeader(i, h[:g.hdrSize])
	return hd.used, hd.pid, hd.ver, err
}

// DecodeSuper exposes the superblock decoder to the fuzz target.
func DecodeSuper(b []byte) error {
	if len(b) < superUsed {
		return ErrBadFormat
	}
	_, err := decodeSuper(b)
	return err
}

// NextRun exposes the mask run iterator.
func NextRun(m []uint64, from int) (int, int) { return nextRun(m, from) }

// Geometry offsets for tests that corrupt a store on purpose.
func HeaderOffset(s *Store, slot int) int  { return s.g.hdrOff + slot*s.g.hdrSize }
func LogOffset(s *Store, lane int) int     { return s.g.logOff + lane*s.g.logStride }
func PayloadOffset(s *Store, slot int) int { return s.g.slotOff + slot*s.g.pageSize }
func CurrentSlot(s *Store, pid int) int {
	if s.g.layout == Checksum {
		return pid
	}
	return int(s.pt[pid].slot)
}

// CRCTail exposes the CRC continuation over pid and seq.
func CRCTail(c uint32, pid, seq uint64) uint32 { return crcTail(c, pid, seq) }

// SetNTHeader chooses how a Packed store writes its header word: a
// streaming store (the default) or Store64 + Persist.
func SetNTHeader(s *Store, nt bool) { s.ntHeader = nt }
