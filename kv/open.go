package kv

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/braid-pm/braid/internal/pmheader"
)

// The identity file of a device (kv.id) names the store and the device's
// place in it, so that a device of another store, or the devices listed
// in another order, are refused (ErrBadFormat) instead of mixed up. It
// says how many segment files the device has had ("files N", rewritten
// before a segment added by growth is used: grow.go), so that a file lost
// from its end is made again as zeros and the references to it reported
// (media.go's zeroed headers), never taken for a device that never had
// it. Once GC has freed a metadata segment that a checkpoint covered, the
// line ends with idNeedsCheckpoint: from then on the logs no longer hold
// the whole store, and an Open that finds no checkpoint refuses it
// (ErrCorrupt) instead of opening what is left of the logs as the store.
type idInfo struct {
	storeID   uint64
	dev, devs int
	segSize   int64
	files     int // 0: not said (a store made before growth)
	needsCkpt bool
}

func idLine(in idInfo) []byte {
	b := fmt.Appendf(nil, "braid kv store %016x device %d of %d segment %d", in.storeID, in.dev, in.devs, in.segSize)
	if in.files > 0 {
		b = fmt.Appendf(b, " files %d", in.files)
	}
	if in.needsCkpt {
		b = append(b, idNeedsCheckpoint...)
	}
	return append(b, '\n')
}

const idNeedsCheckpoint = " needs-checkpoint"

func parseID(b []byte) (in idInfo, err error) {
	line := strings.TrimSpace(string(b))
	line, in.needsCkpt = strings.CutSuffix(line, idNeedsCheckpoint)
	bad := func(err error) (idInfo, error) {
		return idInfo{}, fmt.Errorf("%w: identity file %q is not a kv store's: %v", ErrBadFormat, b, err)
	}
	if i := strings.LastIndex(line, " files "); i >= 0 {
		n, err := strconv.Atoi(line[i+len(" files "):])
		if err != nil || n < 1 {
			return bad(fmt.Errorf("files %q", line[i+len(" files "):]))
		}
		in.files, line = n, line[:i]
	}
	var rest string
	n, err := fmt.Sscanf(line+" .", "braid kv store %x device %d of %d segment %d %s", &in.storeID, &in.dev, &in.devs, &in.segSize, &rest)
	if err != nil || n != 5 || rest != "." {
		return bad(err)
	}
	return in, nil
}

// openMedia locks every device, reads the identities, creates the
// segments of a new store and maps those of an existing one, and reads
// every segment header.
func (s *Store) openMedia() error {
	t0 := time.Now()
	c := &s.c
	n := len(c.Devices)
	if c.media != nil {
		n = c.media.(interface{ count() int }).count()
	}
	ids := make([][]byte, n)
	have := 0
	for i := 0; i < n; i++ {
		dm, err := s.media.device(i)
		if err != nil {
			return err
		}
		s.devs = append(s.devs, &device{idx: i, dm: dm})
		if ids[i], err = dm.id(); err != nil {
			return fmt.Errorf("kv: device %s: %w", dm.name(), err)
		}
		if ids[i] != nil {
			have++
		}
	}
	ckdir, err := s.media.checkpoints()
	if err != nil {
		return err
	}
	s.ckdir = ckdir
	if c.ReadOnly && have < n {
		return fmt.Errorf("%w: no store on %s (%d of %d devices have one): a read-only open creates nothing", ErrInvalid, strings.Join(c.Devices, ", "), have, n)
	}
	if have == 0 {
		s.rep.Created = true
		var b [8]byte
		_, _ = rand.Read(b[:])
		s.storeID = binary.LittleEndian.Uint64(b[:]) | 1
	}
	for i, d := range s.devs {
		if ids[i] == nil {
			continue
		}
		in, err := parseID(ids[i])
		if err != nil {
			return fmt.Errorf("kv: device %s: %w", d.dm.name(), err)
		}
		id, dev, devs, seg, needsCkpt := in.storeID, in.dev, in.devs, in.segSize, in.needsCkpt
		d.idFiles = in.files
		switch {
		case s.storeID != 0 && id != s.storeID:
			return fmt.Errorf("%w: device %s belongs to store %016x, device %s to store %016x", ErrBadFormat, d.dm.name(), id, s.devs[0].dm.name(), s.storeID)
		case dev != i || devs != n:
			return fmt.Errorf("%w: device %s is device %d of %d of its store, listed as %d of %d", ErrBadFormat, d.dm.name(), dev, devs, i, n)
		case seg != c.SegmentSize && c.segSet:
			return fmt.Errorf("%w: device %s has segments of %d bytes, Options.SegmentSize is %d", ErrInvalid, d.dm.name(), seg, c.SegmentSize)
		}
		c.SegmentSize = seg
		s.storeID = id
		s.needsCkpt = s.needsCkpt || needsCkpt
	}
	if err := s.mapSegments(ids); err != nil {
		return err
	}
	s.rep.ReadTime = time.Since(t0)
	return nil
}

func (s *Store) mapSegments(ids [][]byte) error {
	c := &s.c
	limit := c.segments
	if limit == 0 {
		limit = max(int(DefaultDeviceSize/c.SegmentSize), MinSegments(c.workers))
	}
	for i, d := range s.devs {
		regions, err := d.dm.segments(c.SegmentSize)
		if err != nil {
			return err
		}
		if ids[i] == nil {
			// A new store, or a creation that crashed before this
			// device's identity was written: nothing may be on it.
			for j, r := range regions {
				if h, err := decodeSegHeader(r.Bytes()); err != nil || h.kind != kindFree {
					return fmt.Errorf("%w: device %s has no identity file but segment %d holds %s", ErrBadFormat, d.dm.name(), j, describe(r.Bytes(), err))
				}
			}
		}
		existed := len(regions) // the segments after these are new files: zeros
		_, sparse := d.dm.(extender)
		// A device starts with the segments its workers need and grows
		// (grow.go); one whose media cannot add files has them all now.
		want := limit
		if sparse {
			want = MinSegments(c.workers)
		}
		if len(regions) < d.idFiles {
			// Files lost from the device's end (damage): made again as
			// zeros, the references to them reported (media.go).
			if c.ReadOnly {
				return fmt.Errorf("%w: device %s has %d segment files, its kv.id says %d", ErrCorrupt, d.dm.name(), len(regions), d.idFiles)
			}
			if regions, err = d.dm.grow(d.idFiles, c.SegmentSize); err != nil {
				return err
			}
		}
		if len(regions) < want && (ids[i] == nil || c.DeviceSize != 0) && !c.ReadOnly {
			if err := checkCreate(d.dm, want-len(regions), c.workers*2*s.grow.ahead, int64(limit)*c.SegmentSize); err != nil {
				return err
			}
			if regions, err = d.dm.grow(want, c.SegmentSize); err != nil {
				return err
			}
		}
		d.limit, d.grows = max(limit, len(regions)), sparse && !c.ReadOnly
		for j, r := range regions {
			if int64(r.Size()) != c.SegmentSize {
				return fmt.Errorf("%w: device %s segment %d is %d bytes, want %d", ErrBadFormat, d.dm.name(), j, r.Size(), c.SegmentSize)
			}
			g := &segment{dev: d, idx: j, r: r, mem: r.Bytes(), size: r.Size(), zeroed: j >= existed}
			if !sparse {
				g.ext.Store(int64(g.size))
			}
			if g.bad = r.Poisoned(); len(g.bad) > 0 {
				g.poisoned.Store(true)
				s.rep.PoisonedSegments++
				if overlaps(g.bad, 0, pmheader.Size) {
					// Its header is unreadable: what it was is lost. It
					// stays out of every role (kind free, not in the pool).
					s.rep.LostSegments++
					d.segs = append(d.segs, g)
					continue
				}
			}
			h, err := decodeSegHeader(g.mem)
			if err != nil {
				return fmt.Errorf("kv: device %s segment %d: %w", d.dm.name(), j, err)
			}
			if h.kind != kindFree && (h.storeID != s.storeID || h.size != c.SegmentSize) {
				return fmt.Errorf("%w: device %s segment %d belongs to store %016x (of %d-byte segments), not %016x", ErrBadFormat, d.dm.name(), j, h.storeID, h.size, s.storeID)
			}
			g.kind, g.owner = h.kind, h.owner
			g.epoch.Store(h.epoch)
			if h.epoch > s.epoch.Load() {
				s.epoch.Store(h.epoch)
			}
			if g.kind == kindFree && !g.poisoned.Load() && !zeroedHeader(g) { // (media.go)
				d.free = append(d.free, j)
			}
			d.segs = append(d.segs, g)
		}
		if ids[i] == nil || d.idFiles < len(d.segs) && d.grows {
			if err := s.writeID(d, len(d.segs)); err != nil {
				return fmt.Errorf("kv: device %s: write identity: %w", d.dm.name(), err)
			}
		}
	}
	return nil
}

func describe(b []byte, err error) string {
	if err != nil {
		return err.Error()
	}
	return pmheader.Identify(b)
}
