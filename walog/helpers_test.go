package walog_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

var formats = []walog.Format{walog.PopLog, walog.RAWL, walog.Classic}

// nopDomain is a persistence domain that does nothing: a simulated region
// over a Go slice, for tests that need a region over given bytes.
type nopDomain struct{}

func (nopDomain) Flush(off, n int)  {}
func (nopDomain) Stream(off, n int) {}
func (nopDomain) Fence()            {}
func (nopDomain) Close() error      { return nil }

// memRegion returns a region over mem: for the few tests that need a
// region over given bytes (unaligned memory, a shorter view of a log);
// the others use anon.
func memRegion(t testing.TB, mem []byte) *persist.Region {
	t.Helper()
	r, err := persist.NewSimulated(mem, persist.ModeFlush, nopDomain{}, nil)
	require.NoError(t, err)
	return r
}

// anon returns an anonymous region of size bytes, closed at the end of
// the test.
func anon(t testing.TB, size int) *persist.Region { return structtest.Region(t, size) }

// closed tells the error of Check on a closed log (or one whose region
// was closed), which Checked skips.
func closed(err error) bool {
	return errors.Is(err, walog.ErrClosed) || errors.Is(err, persist.ErrClosed)
}

// mustCreate creates a log or fails the test; the log's Check runs when
// the test ends, unless it was closed.
func mustCreate(t testing.TB, r *persist.Region, o *walog.Options) *walog.Log {
	t.Helper()
	l, err := walog.Create(r, o)
	require.NoError(t, err)
	return structtest.Checked(t, l, closed)
}

// mustOpen opens a log or fails the test; the log's Check runs when the
// test ends, unless it was closed.
func mustOpen(t testing.TB, r *persist.Region, o *walog.Options) *walog.Log {
	t.Helper()
	l, err := walog.Open(r, o)
	require.NoError(t, err)
	return structtest.Checked(t, l, closed)
}

// entry is an appended entry, as the model keeps it.
type entry struct {
	seq  uint64
	data []byte
}

func (e entry) String() string { return fmt.Sprintf("#%d(%d B)", e.seq, len(e.data)) }

// all reads every entry of l.
func all(t testing.TB, l *walog.Log) []entry {
	t.Helper()
	var got []entry
	it := l.Iter()
	for it.Next() {
		got = append(got, entry{it.Seq(), append([]byte(nil), it.Entry()...)})
	}
	require.NoError(t, it.Err())
	return got
}

// payload returns n pseudo-random bytes that name seq, so a misplaced or
// mixed entry is caught.
func payload(rng *structtest.Rand, seq uint64, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(rng.Uint64())
	}
	for i := 0; i < n && i < 8; i++ {
		p[i] = byte(seq >> (8 * i))
	}
	return p
}

// randSize draws an entry size: mostly small, sometimes around the
// cut-offs of the encodings (8-byte words, 63-word RAWL groups, lines).
func randSize(rng *structtest.Rand, limit int) int {
	sizes := []int{1, 7, 8, 9, 15, 16, 17, 48, 63, 64, 65, 255, 256, 257, 503, 504, 505, 1000}
	var n int
	if rng.Intn(3) == 0 {
		n = sizes[rng.Intn(len(sizes))]
	} else {
		n = 1 + rng.Intn(200)
	}
	return min(max(n, 1), limit)
}

// requireEntries compares entry lists (nil and empty alike).
func requireEntries(t testing.TB, want, got []entry, msg ...any) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	require.Equal(t, want, got, msg...)
}
