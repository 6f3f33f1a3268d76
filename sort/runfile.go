package sort

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort/internal/sortio"
)

// A run file (MergePass) is a 64-byte header followed by the packed
// entries of one sorted IndexMap:
//
//	off size field
//	  0    8 magic "BRDSORTR"
//	  8    4 version (1)
//	 12    2 key size K
//	 14    1 pointer size P (5 or 8)
//	 15    1 pointer kind: 0 record index, 1 byte offset (KLV)
//	 16    2 entry size (K+P, +4 for KLV)
//	 18    2 flags: bit 0 = entries carry the KLV value length
//	 20    4 zero
//	 24    8 entry count
//	 32    8 size of the input file the pointers refer to
//	 40   20 zero
//	 60    4 CRC-32C of bytes 0..59 (persist.CRC32C)
//
// The magic is registered in internal/pmheader; testdata/runheader_*.hex
// are the golden images of the header.
// An EMS run file is a plain sequence of records in the input's format (no
// header), like the runs of any external merge sort.
const (
	runMagic      = "BRDSORTR"
	runVersion    = 1
	runHeaderSize = 64
)

type runHeader struct {
	l         layout
	count     int64
	inputSize int64
}

func (h runHeader) encode() []byte {
	b := make([]byte, runHeaderSize)
	copy(b, runMagic)
	binary.LittleEndian.PutUint32(b[8:], runVersion)
	binary.LittleEndian.PutUint16(b[12:], uint16(h.l.k))
	b[14] = byte(h.l.p)
	if h.l.klv {
		b[15] = 1
		binary.LittleEndian.PutUint16(b[18:], 1)
	}
	binary.LittleEndian.PutUint16(b[16:], uint16(h.l.e))
	binary.LittleEndian.PutUint64(b[24:], uint64(h.count))
	binary.LittleEndian.PutUint64(b[32:], uint64(h.inputSize))
	binary.LittleEndian.PutUint32(b[60:], persist.CRC32C(b[:60]))
	return b
}

// decodeRunHeader checks a run file image (header and entries) and returns
// its header. Every inconsistency is an ErrCorrupt error.
func decodeRunHeader(b []byte) (runHeader, error) {
	var h runHeader
	if len(b) < runHeaderSize {
		return h, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorrupt, len(b), runHeaderSize)
	}
	if string(b[:8]) != runMagic {
		// The sort wrote this file: another magic is damage, named.
		return h, fmt.Errorf("%w: not a run file: its header holds %s", ErrCorrupt, pmheader.Identify(b))
	}
	if got, want := binary.LittleEndian.Uint32(b[60:]), persist.CRC32C(b[:60]); got != want {
		return h, fmt.Errorf("%w: header checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != runVersion {
		return h, fmt.Errorf("%w: version %d, this build reads %d", ErrCorrupt, v, runVersion)
	}
	k := int(binary.LittleEndian.Uint16(b[12:]))
	p := int(b[14])
	kind := b[15]
	e := int(binary.LittleEndian.Uint16(b[16:]))
	flags := binary.LittleEndian.Uint16(b[18:])
	if k < 1 || k > MaxKeySize || (p != 5 && p != 8) || kind > 1 || flags > 1 || (kind == 1) != (flags == 1) {
		return h, fmt.Errorf("%w: key %d, pointer %d, kind %d, flags %d", ErrCorrupt, k, p, kind, flags)
	}
	h.l = newLayout(k, p, flags == 1)
	if e != h.l.e {
		return h, fmt.Errorf("%w: entry size %d, want %d", ErrCorrupt, e, h.l.e)
	}
	cnt := binary.LittleEndian.Uint64(b[24:])
	h.inputSize = int64(binary.LittleEndian.Uint64(b[32:]))
	body := uint64(len(b) - runHeaderSize)
	if cnt > body/uint64(e) || cnt*uint64(e) != body || h.inputSize < 0 {
		return h, fmt.Errorf("%w: %d entries of %d bytes in a %d-byte body", ErrCorrupt, cnt, e, body)
	}
	h.count = int64(cnt)
	return h, nil
}

// setupTempDir picks the run-file directory and checks that it is
// writable before any work is done.
func (j *job) setupTempDir(outDir string) error {
	dir := j.s.o.TempDir
	if dir == "" {
		dir = outDir
	}
	st, err := os.Stat(dir)
	if err != nil {
		return sortio.OptionError("temp dir: %v", err)
	}
	if !st.IsDir() {
		return sortio.OptionError("temp dir %s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".pmsort-probe-*")
	if err != nil {
		return sortio.OptionError("temp dir %s is not writable: %v", dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	j.tmpDir = dir
	return nil
}

// newRunFile creates a temporary run file of size bytes.
func (j *job) newRunFile(size int64) (*sortio.Mapped, error) {
	if j.s.failAfterRuns > 0 && len(j.temps) >= j.s.failAfterRuns {
		return nil, fmt.Errorf("sort: injected failure creating run %d", len(j.temps))
	}
	name := filepath.Join(j.tmpDir, fmt.Sprintf("pmsort-run-%s-%d", sortio.RandSuffix(), len(j.temps)))
	m, err := sortio.CreateMappedOn(name, name, size, j.s.o.ForcePMem, j.s.device(), j.s.o.Faults)
	if err != nil {
		return nil, fmt.Errorf("sort: run file: %w", err)
	}
	j.temps = append(j.temps, name)
	j.runs = append(j.runs, m)
	return m, nil
}

func (j *job) removeTemps() {
	for _, t := range j.temps {
		os.Remove(t)
	}
	j.temps = nil
}
