package sortbench

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/braid-pm/braid/sort/internal/sortio"
	"github.com/braid-pm/braid/sort/record"
)

// GenOptions says what Generate writes. The zero value (plus Count) is
// gensort 1.5 with its default arguments: binary 100-byte records starting
// at record 0.
type GenOptions struct {
	Count uint64  // number of records
	Start Uint128 // first record number (gensort -b); numbers past 2^128-1 wrap to 0, as in gensort
	ASCII bool    // printable records (gensort -a); gensort format only
	Skew  bool    // skewed keys (gensort -s)

	// Format of the records; the zero value means Gensort. For any format
	// other than Gensort (our extension), record r is the first bytes of an
	// endless stream: the 100 bytes gensort writes for record r, then a
	// splitmix64 stream seeded by the record's random number. A fixed record
	// takes KeySize+ValueSize bytes of it; a KLV record takes KeySize bytes
	// as key, then the value length, then the next value_len bytes. So a
	// fixed 10+90 format is exactly gensort.
	Format record.Format
	// MinValue and MaxValue bound KLV value lengths (uniform in between).
	MinValue, MaxValue int

	Threads  int  // generator goroutines; 0 means GOMAXPROCS
	Checksum bool // compute the sum of the records' CRC-32 (gensort -c)
}

// GenResult describes what Generate wrote.
type GenResult struct {
	Records  uint64
	Bytes    int64
	Checksum Uint128 // sum of CRC-32 of every record, if requested
}

// payloadXor are the constants that gensort 1.5 XORs into the random
// numbers of the nine 10-byte value parts (gensort 1.5's gensort.c, as
// published with sortbenchmark.org's tools).
var payloadXor = [10]Uint128{
	{},
	{0xF0E8E4E2E1D8D4D2, 0xD1CC000000000000},
	{0xCAC9C6C5C3B8B4B2, 0xB1AC000000000000},
	{0xAAA9A6A5A39C9A99, 0x9695000000000000},
	{0x938E8D8B87787472, 0x716C000000000000},
	{0x6A696665635C5A59, 0x5655000000000000},
	{0x534E4D4B473C3A39, 0x3635000000000000},
	{0x332E2D2B271E1D1B, 0x170F000000000000},
	{0xC8C4C2C198949291, 0x8CE0000000000000},
	{0x170F332E2D2B271E, 0x1D1B000000000000},
}

const skewBytes = 6

// The skew tables of gensort 1.5 are the first six key bytes (binary) and
// key characters (ASCII) of records 0..128, which is how we build them;
// gen_test.go checks entries against the published table.
var skewBinary, skewASCII [129][skewBytes]byte

func init() {
	var g generator
	g.seek(Uint128{})
	var rec [100]byte
	for i := range skewBinary {
		putKey10(rec[:], g.ring[g.h])
		copy(skewBinary[i][:], rec[:skewBytes])
		asciiKey(rec[:], g.ring[g.h])
		copy(skewASCII[i][:], rec[:skewBytes])
		g.bump()
	}
}

// skewIndex is gensort's get_skew_index: roughly log2 of the record number
// plus one, but 64 (128) as soon as any of the top four bits of the low
// (high) half is set.
func skewIndex(r Uint128) int {
	if r.Hi == 0 {
		if r.Lo == 0 {
			return 0
		}
		if r.Lo&0xF000000000000000 != 0 {
			return 64
		}
		return bits.Len64(r.Lo)
	}
	if r.Hi&0xF000000000000000 != 0 {
		return 128
	}
	return 64 + bits.Len64(r.Hi)
}

// generator produces consecutive records. It keeps gensort's queue of the
// ten random numbers a record uses, doubled so that ring[h+k] needs no
// modulo: ring[i] == ring[i+10].
type generator struct {
	ring [20]Uint128
	h    int
	rec  Uint128 // number of the record the ring is positioned at
}

// seek positions g at record r: the record's key uses X_{r+1}.
func (g *generator) seek(r Uint128) {
	x := lcgNext(lcgSkip(r))
	for i := 0; i < 10; i++ {
		g.ring[i], g.ring[i+10] = x, x
		x = lcgNext(x)
	}
	g.h = 0
	g.rec = r
}

// bump advances to the next record.
func (g *generator) bump() {
	x := lcgNext(g.ring[g.h+9])
	g.ring[g.h], g.ring[g.h+10] = x, x
	g.h++
	if g.h == 10 {
		g.h = 0
	}
	g.rec = g.rec.Add64(1)
}

func putKey10(dst []byte, x Uint128) {
	_ = dst[9]
	binary.BigEndian.PutUint64(dst, x.Hi)
	dst[8] = byte(x.Lo >> 56)
	dst[9] = byte(x.Lo >> 48)
}

// binary writes gensort 1.5's binary record (100 bytes).
func (g *generator) binary(dst []byte, skew bool) {
	_ = dst[99]
	r := g.ring[g.h : g.h+10]
	putKey10(dst, r[0])
	for k := 1; k < 10; k++ {
		x := r[k]
		putKey10(dst[10*k:], Uint128{x.Hi ^ payloadXor[k].Hi, x.Lo ^ payloadXor[k].Lo})
	}
	if !skew {
		return
	}
	sb := &skewBinary[skewIndex(g.rec)]
	n := int(r[0].Lo>>32) & 0x3F
	if n > 8*skewBytes {
		n = 0 // a quarter of the records keep their random key
	}
	i := 0
	for ; n >= 8; n -= 8 {
		dst[i] = sb[i]
		i++
	}
	if n > 0 {
		mask := byte(0xFF) >> uint(n)
		dst[i] = sb[i]&^mask | dst[i]&mask
	}
}

const hexUpper = "0123456789ABCDEF"

func asciiKey(dst []byte, x Uint128) {
	t := x.Hi
	for i := 0; i < 8; i++ {
		dst[i] = byte(' ' + t%95)
		t /= 95
	}
	t = x.Lo
	dst[8] = byte(' ' + t%95)
	t /= 95
	dst[9] = byte(' ' + t%95)
}

// ascii writes gensort 1.5's printable record (-a): 10 key characters, two
// spaces, the record number in 32 upper-case hex digits, two spaces, 52
// filler characters (13 hex digits of the random number, each four times),
// CR LF.
func (g *generator) ascii(dst []byte, skew bool) {
	_ = dst[99]
	x := g.ring[g.h]
	asciiKey(dst, x)
	dst[10], dst[11] = ' ', ' '
	for i := 0; i < 16; i++ {
		dst[12+i] = hexUpper[g.rec.Hi>>uint(60-4*i)&0xF]
		dst[28+i] = hexUpper[g.rec.Lo>>uint(60-4*i)&0xF]
	}
	dst[44], dst[45] = ' ', ' '
	for i := 0; i < 13; i++ {
		c := hexUpper[x.Lo>>uint(48-4*i)&0xF]
		p := dst[46+4*i : 50+4*i]
		p[0], p[1], p[2], p[3] = c, c, c, c
	}
	dst[98], dst[99] = '\r', '\n'
	if !skew {
		return
	}
	n := int(x.Lo>>32) & 0x7
	if n > skewBytes {
		n = 0
	}
	copy(dst[:n], skewASCII[skewIndex(g.rec)][:n])
}

// splitmix64 is the value stream of our non-gensort formats.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9E3779B97F4A7C15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (g *generator) mixSeed() splitmix64 {
	x := g.ring[g.h]
	return splitmix64(x.Hi ^ bits.RotateLeft64(x.Lo, 29))
}

// stream fills dst with the first len(dst) bytes of the record stream (see
// GenOptions.Format); s must be the record's splitmix64 state after any
// words already consumed (the KLV length).
func (g *generator) stream(dst []byte, skew bool, s *splitmix64) {
	var rec [100]byte
	g.binary(rec[:], skew)
	n := copy(dst, rec[:])
	for n < len(dst) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], s.next())
		n += copy(dst[n:], w[:])
	}
}

// klvValueLen returns the value length of the current record and the
// splitmix64 state after drawing it.
func (g *generator) klvValueLen(o *GenOptions) (int, splitmix64) {
	s := g.mixSeed()
	w := s.next()
	span := uint64(o.MaxValue - o.MinValue + 1)
	return o.MinValue + int(w%span), s
}

// normalize fills defaults and checks the options.
func (o *GenOptions) normalize() error {
	if o.Format == (record.Format{}) {
		o.Format = record.Gensort
	}
	if err := o.Format.Validate(); err != nil {
		return err
	}
	if o.ASCII && o.Format != record.Gensort {
		return sortio.OptionError("ASCII records exist only in the gensort format (10+90)")
	}
	if o.Format.KLV {
		if o.MinValue < 0 || o.MaxValue < o.MinValue || o.MaxValue > record.MaxKLVValue {
			return sortio.OptionError("KLV value lengths %d..%d, want 0 <= min <= max <= %d",
				o.MinValue, o.MaxValue, record.MaxKLVValue)
		}
	}
	if o.Threads < 0 || o.Threads > sortio.MaxPool {
		return sortio.OptionError("%d generator goroutines, want 0 (all CPUs) to %d", o.Threads, sortio.MaxPool)
	}
	if o.Threads == 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	return nil
}

// genChunk is how many records one task generates.
const genChunk = 1 << 15

// maxFileSize bounds a generated file (an int64 offset).
const maxFileSize = 1<<63 - 1

// sizeBounds returns the smallest and largest size of the file o
// describes (equal for fixed-size records), computed without generating
// anything; ok is false when the largest does not fit in an int64.
func (o *GenOptions) sizeBounds() (lo, hi uint64, ok bool) {
	mul := func(n, size uint64) (uint64, bool) {
		h, l := bits.Mul64(n, size)
		return l, h == 0 && l <= maxFileSize
	}
	if !o.Format.KLV {
		v, ok := mul(o.Count, uint64(o.Format.RecordSize()))
		return v, v, ok
	}
	base := uint64(o.Format.KeySize + record.KLVHeader)
	lo, okLo := mul(o.Count, base+uint64(o.MinValue))
	hi, okHi := mul(o.Count, base+uint64(o.MaxValue))
	if !okLo {
		lo = maxFileSize + 1
	}
	return lo, hi, okHi
}

// checkSize fails fast when the records o describes cannot fit: more
// than an int64 of bytes, or (when free >= 0) more than free bytes.
func (o *GenOptions) checkSize(free int64, where string) error {
	lo, hi, ok := o.sizeBounds()
	what := fmt.Sprintf("%d records of %d bytes", o.Count, o.Format.RecordSize())
	if o.Format.KLV {
		what = fmt.Sprintf("%d KLV records (key %d, values of %d..%d bytes)", o.Count, o.Format.KeySize, o.MinValue, o.MaxValue)
	}
	if lo > maxFileSize {
		return sortio.OptionError("%s make more than 2^63 bytes", what)
	}
	if free >= 0 && lo > uint64(free) {
		if lo == hi {
			return &sortio.DetailError{Sentinel: ErrNoSpace, Msg: fmt.Sprintf("sort: %s make %d bytes; %s has %d bytes free", what, lo, where, free)}
		}
		return &sortio.DetailError{Sentinel: ErrNoSpace, Msg: fmt.Sprintf("sort: %s make at least %d bytes; %s has %d bytes free", what, lo, where, free)}
	}
	if !ok && !o.Format.KLV {
		return sortio.OptionError("%s make more than 2^63 bytes", what)
	}
	return nil
}

// FreeSpace returns the bytes available in the file system holding dir.
func FreeSpace(dir string) (int64, error) { return sortio.FreeSpace(dir) }

// genPlan computes the byte offset of every chunk (and the total size),
// failing as soon as the total passes limit (limit < 0: no limit).
func genPlan(ctx context.Context, o *GenOptions, limit int64, where string) ([]int64, error) {
	if err := o.checkSize(limit, where); err != nil {
		return nil, err
	}
	chunks := (o.Count + genChunk - 1) / genChunk
	offs := make([]int64, chunks+1)
	if !o.Format.KLV {
		rs := uint64(o.Format.RecordSize())
		for i := range offs {
			n := min(uint64(i)*genChunk, o.Count)
			offs[i] = int64(n * rs) // checkSize: no overflow
		}
		return offs, nil
	}
	// KLV: sizes depend on the value lengths; draw them in parallel, and
	// stop as soon as the running total is known to be too large.
	sizes := offs[1:]
	var total atomic.Int64
	err := sortio.ParallelChunks(ctx, o.Threads, int(chunks), func(c int) error {
		var g generator
		first := uint64(c) * genChunk
		n := min(uint64(genChunk), o.Count-first)
		g.seek(o.Start.Add64(first))
		var sum int64
		for j := uint64(0); j < n; j++ {
			vl, _ := g.klvValueLen(o)
			sum += int64(o.Format.KeySize + record.KLVHeader + vl)
			g.bump()
		}
		sizes[c] = sum
		if t := total.Add(sum); limit >= 0 && t > limit {
			return &sortio.DetailError{Sentinel: ErrNoSpace, Msg: fmt.Sprintf("sort: the KLV records make more than %d bytes; %s has %d bytes free", t, where, limit)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(offs); i++ {
		offs[i] += offs[i-1]
	}
	return offs, nil
}

// genSink receives generated bytes at their final offsets.
type genSink interface {
	Put(off int64, b []byte) error
}

// generate runs the generator into sink at offs (nil, nil: only count and
// checksum).
func generate(ctx context.Context, o *GenOptions, offs []int64, sink genSink) (Uint128, int64, error) {
	chunks := int((o.Count + genChunk - 1) / genChunk)
	var mu sync.Mutex
	var total Uint128
	var bytes int64
	const bufSize = 256 << 10
	err := sortio.ParallelChunks(ctx, o.Threads, chunks, func(c int) error {
		buf := make([]byte, 0, bufSize)
		var sum Uint128
		var g generator
		first := uint64(c) * genChunk
		n := min(uint64(genChunk), o.Count-first)
		g.seek(o.Start.Add64(first))
		var off int64
		if offs != nil {
			off = offs[c]
		}
		start := off
		flush := func() error {
			if sink != nil && len(buf) > 0 {
				if err := sink.Put(off, buf); err != nil {
					return err
				}
			}
			off += int64(len(buf))
			buf = buf[:0]
			return nil
		}
		for j := uint64(0); j < n; j++ {
			rec := g.record(o, &buf)
			if o.Checksum {
				sum = sum.Add64(uint64(crc32.ChecksumIEEE(rec)))
			}
			g.bump()
			if len(buf) >= bufSize-128 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		mu.Lock()
		total = total.Add(sum)
		bytes += off - start
		mu.Unlock()
		return nil
	})
	return total, bytes, err
}

// record appends the current record to *buf and returns it.
func (g *generator) record(o *GenOptions, buf *[]byte) []byte {
	b := *buf
	start := len(b)
	switch {
	case o.Format == record.Gensort:
		b = b[:start+100]
		if o.ASCII {
			g.ascii(b[start:], o.Skew)
		} else {
			g.binary(b[start:], o.Skew)
		}
	case !o.Format.KLV:
		n := o.Format.RecordSize()
		b = grow(b, n)
		s := g.mixSeed()
		g.stream(b[start:start+n], o.Skew, &s)
	default:
		k := o.Format.KeySize
		vl, s := g.klvValueLen(o)
		b = grow(b, k+record.KLVHeader+vl)
		rec := b[start:]
		// The record stream runs key then value; the header sits between.
		tmp := rec[record.KLVHeader:]
		g.stream(tmp[:k+vl], o.Skew, &s)
		copy(rec[:k], tmp[:k])
		binary.LittleEndian.PutUint32(rec[k:], uint32(vl))
	}
	*buf = b
	return b[start:]
}

// grow extends b by n bytes, reallocating if needed.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// memSink writes into a byte slice.
type memSink []byte

func (m memSink) Put(off int64, b []byte) error {
	copy(m[off:], b)
	return nil
}

// GenerateBytes returns the generated records in memory (for tests and
// small inputs).
func GenerateBytes(o GenOptions) ([]byte, GenResult, error) {
	return generateBytes(context.Background(), o)
}

func generateBytes(ctx context.Context, o GenOptions) ([]byte, GenResult, error) {
	if err := o.normalize(); err != nil {
		return nil, GenResult{}, err
	}
	// In memory: the records must fit the physical memory (0: unknown).
	limit := int64(-1)
	if ram := sortio.PhysicalMemory(); ram > 0 {
		limit = ram
	}
	offs, err := genPlan(ctx, &o, limit, "memory")
	if err != nil {
		return nil, GenResult{}, err
	}
	size := offs[len(offs)-1]
	out := make([]byte, size)
	sum, _, err := generate(ctx, &o, offs, memSink(out))
	if err != nil {
		return nil, GenResult{}, err
	}
	return out, GenResult{Records: o.Count, Bytes: size, Checksum: sum}, nil
}

// Generate writes the records to path. Like gensort it replaces an
// existing file (not a read-only one: ErrReadOnly) — but only once the new
// one is complete: the records are written under a temporary name, made
// durable and renamed (a symbolic link is followed). A path that is not a
// regular file (a pipe, a terminal, /dev/stdout) is written in order
// (GenerateTo). Writing to /dev/null only computes (gensort skips the
// output there too). A size
// that cannot fit (more than 2^63 bytes, or more than the file system's
// free space) is an error before anything is generated.
func Generate(ctx context.Context, path string, o GenOptions, force bool) (GenResult, error) {
	if err := o.normalize(); err != nil {
		return GenResult{}, err
	}
	if path == os.DevNull {
		if err := o.checkSize(-1, ""); err != nil {
			return GenResult{}, err
		}
		res := GenResult{Records: o.Count}
		var err error
		res.Checksum, res.Bytes, err = generate(ctx, &o, nil, nil)
		return res, err
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return GenResult{}, sortio.OptionError("%s is a directory; give a file name", path)
	case err == nil && !st.Mode().IsRegular():
		// A pipe, a terminal, /dev/stdout: written in order, as gensort
		// writes them.
		return generateStream(ctx, path, o)
	case err == nil && st.Mode().Perm()&0o222 == 0:
		// gensort's fopen would refuse it (except to root); the rename
		// would replace it silently.
		return GenResult{}, &sortio.DetailError{Sentinel: ErrReadOnly, Msg: fmt.Sprintf("sort: %s is read-only (mode %04o): remove it or make it writable to replace it", path, st.Mode().Perm())}
	}
	// A symbolic link is followed, as gensort's fopen follows it: the
	// records replace the file it points to, not the link.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	dir := filepath.Dir(path)
	free, err := sortio.FreeSpace(dir)
	if err != nil {
		return GenResult{}, err
	}
	offs, err := genPlan(ctx, &o, free, dir)
	if err != nil {
		return GenResult{}, err
	}
	size := offs[len(offs)-1]
	res := GenResult{Records: o.Count, Bytes: size}
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".pmsort-"+sortio.RandSuffix()+".tmp")
	m, err := sortio.CreateMappedAs(tmp, path, size, force)
	if err != nil {
		return res, err
	}
	ok := false
	defer func() {
		if !ok {
			m.Close()
			os.Remove(tmp)
		}
	}()
	// Another program may truncate the file under the mapping: the
	// stores run under persist.Guard (in sortio.ParallelChunks).
	if res.Checksum, _, err = generate(ctx, &o, offs, m); err != nil {
		return res, sortio.ExplainFault(err, "generation", m)
	}
	if err := m.Sync(); err != nil {
		return res, err
	}
	if err := m.Close(); err != nil {
		return res, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return res, err
	}
	ok = true
	if err := sortio.SyncDir(dir); err != nil {
		return res, fmt.Errorf("sort: %s is complete, but syncing its directory failed (the rename may not be durable): %w", path, err)
	}
	return res, nil
}

// generateStream writes the records to the pipe or device at path.
func generateStream(ctx context.Context, path string, o GenOptions) (GenResult, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return GenResult{}, &sortio.FileError{Path: path, Err: sortio.PathCause(err)}
	}
	res, err := GenerateTo(ctx, f, o)
	if e2 := f.Close(); err == nil {
		err = e2
	}
	return res, sortio.InFile(path, err)
}

// Validate checks the options without generating anything. Its errors
// match ErrInvalid (persist.ErrInvalid), or ErrBadFormat for the format.
func (o GenOptions) Validate() error { return o.normalize() }
