package pagelog

import (
	"fmt"
	"unsafe"

	"github.com/braid-pm/braid/persist"
)

// Test hooks: the deliberately broken orderings the crash tests show the
// simulator catching, and the decoders for the fuzz targets.

// Broken variants by name.
var brokenByName = map[string]variant{
	"pvn-before-pid":           brokenPVNFirst,
	"no-payload-fence":         brokenNoPayloadFence,
	"microlog-in-place-first":  brokenInPlaceFirst,
	"microlog-replay-stale":    brokenReplayStale,
	"microlog-no-settle":       brokenNoSettle,
	"microlog-no-wrap-reset":   brokenNoWrapReset,
	"checksum-no-backup-fence": brokenNoBackupFence,
	"late-crc":                 brokenLateCRC,
	"no-lane-affinity":         brokenNoLaneAffinity,
	"zero-super":               brokenZeroSuper,
	"reuse-poisoned-slot":      brokenReuseSpare,
}

func brokenNamed(name string) variant {
	b, ok := brokenByName[name]
	if !ok {
		panic("pagelog: no broken variant " + name)
	}
	return b
}

// SetBroken switches s to the named broken ordering.
func SetBroken(s *Store, name string) { s.broken = brokenNamed(name) }

// OpenBroken is Open with the named broken variant active during recovery
// (and after: the store keeps it).
func OpenBroken(r *persist.Region, o *Options, name string) (*Store, error) {
	b := brokenNamed(name)
	s, err := guardOpen(r, "open", func() (*Store, error) { return open(r, o, b) })
	if s != nil {
		s.broken = b
	}
	return s, err
}

// CreateBroken is Create with the named broken variant active during it.
func CreateBroken(r *persist.Region, o *Options, name string) (*Store, error) {
	return create(r, o, brokenNamed(name))
}

// DecodeHeader exposes the slot-header decoder to the fuzz target.
func DecodeHeader(layout Layout, crc bool, pages, slots, pidBits, i int, h []byte) (used bool, pid, ver uint64, err error) {
	g, err := newGeometry(layout, MinPageSize, pages, slots, pidBits, crc, 0)
	if err != nil {
		return false, 0, 0, err
	}
	if len(h) < g.hdrSize {
		return false, 0, 0, ErrInvalid
	}
	hd, err := g.decodeHeader(i, h[:g.hdrSize])
	return hd.used, hd.pid, hd.ver, err
}

// DecodeMicro exposes the micro-log entry decoder to the fuzz target: e is
// an entry of lane l's log in a Packed store of pages pages in slots
// slots (pid bits as few as needed, or 45: 2 version bits).
func DecodeMicro(crc bool, pageSize, pages, slots, pidBits, l int, e []byte) (pid, slot, ver uint64, mask []uint64, lines []byte, err error) {
	g, err := newGeometry(Packed, pageSize, pages, slots, pidBits, crc, 0)
	if err != nil || l < 0 || l >= g.lanes {
		return 0, 0, 0, nil, nil, ErrInvalid
	}
	d, err := g.decodeMicro(l, e, make([]uint64, g.maskWords))
	return d.pid, d.slot, d.ver, d.mask, d.lines, err
}

// EncodeMicro lays out a micro-log entry as writeMicro does.
func EncodeMicro(crc bool, pageSize, pages, slots, pidBits int, pid, slot, ver, crcw uint64, mask []uint64, page []byte) []byte {
	g, err := newGeometry(Packed, pageSize, pages, slots, pidBits, crc, 0)
	if err != nil {
		panic(err)
	}
	e := make([]byte, g.logMax)
	return e[:g.encodeMicro(e, pid, slot, ver, crcw, mask, appendRuns(nil, mask), page)]
}

// AppendMicro appends the raw entry e to lane l's micro log, as a
// micro-log write would, without touching the page: the corruption tests
// plant entries a correct store never writes.
func AppendMicro(s *Store, l int, e []byte) error {
	_, err := s.lanes[l].log.Append(e)
	return err
}

// MicroLogEntries returns the number of entries in lane l's micro log.
func MicroLogEntries(s *Store, l int) int { return s.lanes[l].log.Stats().Entries }

// MicroLogWraps returns how many times lane l's micro log wrapped since
// Create or Open.
func MicroLogWraps(s *Store, l int) int { return s.lanes[l].log.Stats().Wraps }

// DecodeSuper exposes the superblock decoder to the fuzz target: the
// error of a copy of the given role that is not sound (nil when it is).
func DecodeSuper(b []byte, role byte) error {
	if len(b) < superUsed {
		return ErrBadFormat
	}
	c := decodeSuper(b, role)
	switch {
	case c.state == superSound:
		return nil
	case c.err != nil:
		return c.err
	case c.state == superZero || c.state == superCreating:
		return fmt.Errorf("%w: %s", ErrNoStore, c.why)
	}
	return fmt.Errorf("%w: %s", ErrBadFormat, c.why)
}

// SuperCopyOffset is where the superblock's copy lies in the store.
const SuperCopyOffset = superCopyOff

// CreatingMagic is the magic Create writes first.
var CreatingMagic = creatingMagic

// Seal, Unseal and CRC16 expose the sealed-word code.
func Seal(d uint64) uint64           { return seal(d) }
func Unseal(w uint64) (uint64, bool) { return unseal(w) }
func CRC16(d uint64) uint16          { return crc16(d) }

// Runs exposes appendRuns as [lo, hi) pairs.
func Runs(m []uint64) [][2]int {
	var out [][2]int
	for _, r := range appendRuns(nil, m) {
		out = append(out, [2]int{r.lo, r.hi})
	}
	return out
}

// NextRun exposes the mask run iterator.
func NextRun(m []uint64, from int) (int, int) { return nextRun(m, from) }

// Geometry offsets for tests that corrupt a store on purpose.
func HeaderOffset(s *Store, slot int) int  { return s.g.hdrOff + slot*s.g.hdrSize }
func HeaderSize(s *Store) int              { return s.g.hdrSize }
func LogOffset(s *Store, lane int) int     { return s.g.logOff + lane*s.g.logStride }
func LogSize(s *Store) int                 { return s.g.logStride }
func PayloadOffset(s *Store, slot int) int { return s.g.slotOff + slot*s.g.pageSize }
func CurrentSlot(s *Store, pid int) int    { return s.slotOf(uint64(pid)) }
func Spare(s *Store, lane int) int         { return int(s.lanes[lane].spare) }

// CRCTail exposes the CRC continuation over pid and seq.
func CRCTail(c uint32, pid, seq uint64) uint32 { return crcTail(c, pid, seq) }

// SetNTHeader chooses how a Packed store writes its header word: a
// streaming store (the default) or Store64 + Persist.
func SetNTHeader(s *Store, nt bool) { s.ntHeader = nt }

// SetMaxVersion lowers the largest version a TwoWord page may reach, to
// reach ErrVersionExhausted in a test.
func SetMaxVersion(s *Store, v uint64) { s.maxVer = v }

// LaneSize is the size of a lane (two cache lines).
const LaneSize = unsafe.Sizeof(lane{})
