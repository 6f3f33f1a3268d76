// Package structtest is the test kit of braid's persistent structures:
// regions (anonymous, or mapped on tmpfs for benchmarks), a seeded
// xorshift generator, a probe of a region's claims, and a registration
// that runs a structure's Check when its test ends (bbolt's
// PostTestCleanup). It imports only persist, so a structure's own
// in-package tests can use it; builders of every kind (for opening one
// kind over another) are in the subpackage kinds. Tests import it; no
// production code does.
package structtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/braid-pm/braid/persist"
)

// Region returns an anonymous region of size bytes, closed when t ends.
func Region(t testing.TB, size int) *persist.Region {
	t.Helper()
	r, err := persist.Anonymous(size, nil)
	if err != nil {
		t.Fatalf("anonymous region of %d bytes: %v", size, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// ShmDir is where tests and benchmarks put files that stand for PMem:
// /dev/shm when it is a directory (tmpfs: the PMem instruction path over
// DRAM), else the system's temporary directory.
func ShmDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// TempShm returns a new directory under ShmDir, removed when t ends.
func TempShm(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp(ShmDir(), "braid-test-")
	if err != nil {
		t.Fatalf("temporary directory under %s: %v", ShmDir(), err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// MapShm maps a new file of size bytes under ShmDir on the forced PMem
// path (flush instructions, streaming stores: the setting braid and
// libpmem benchmark in), closed when t ends. The file is unlinked at once:
// the mapping keeps its memory until Close.
func MapShm(t testing.TB, size int) *persist.Region {
	t.Helper()
	path := filepath.Join(ShmDir(), fmt.Sprintf("braid-%s-%d.pm", sanitize(t.Name()), os.Getpid()))
	r, err := persist.Map(path, &persist.Options{Size: int64(size), Create: true, ForcePMem: true})
	os.Remove(path)
	if err != nil {
		t.Fatalf("map %d bytes at %s: %v", size, path, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Shared maps one forced-PMem region per (name, size) for the life of the
// test binary, for benchmarks that should not pay a fresh mapping's first
// touches (page faults and zeroing, seconds per GiB on a VM) in every
// b.Run. It is never closed; the file is unlinked at once.
func Shared(tb testing.TB, name string, size int) *persist.Region {
	tb.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	key := fmt.Sprintf("%s/%d", name, size)
	if r, ok := shared[key]; ok {
		return r
	}
	path := filepath.Join(ShmDir(), fmt.Sprintf("braid-%s-%d-%d.pm", sanitize(name), size, os.Getpid()))
	r, err := persist.Map(path, &persist.Options{Size: int64(size), Create: true, ForcePMem: true})
	os.Remove(path)
	if err != nil {
		tb.Fatalf("map %d bytes at %s: %v", size, path, err)
	}
	shared[key] = r
	return r
}

var (
	sharedMu sync.Mutex
	shared   = map[string]*persist.Region{}
)

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// RequireFree fails t unless no open structure claims any of the n bytes
// at off of r: a probe claim of them succeeds.
func RequireFree(t testing.TB, r *persist.Region, off, n int) {
	t.Helper()
	rel, err := r.Claim(off, n, "probe")
	if err != nil {
		t.Fatalf("bytes %d..%d are still claimed: %v", off, off+n, err)
	}
	rel()
}

// A Checker is a structure with a consistency check: walog's Log,
// pagelog's Store, fptree's Tree, kv's Store.
type Checker interface {
	Check() error
}

// Checked registers c's Check to run when t ends, after the test's own
// body and before the cleanups registered earlier (so before the region
// closes): a test that leaves its structure inconsistent fails even if it
// asserted nothing about it. Return c, so a constructor can be wrapped:
// tr := structtest.Checked(t, mustCreate(t, r)). A structure that the
// test closed is skipped when its Check says so with an error for which
// closed returns true (nil: every error fails).
func Checked[C Checker](t testing.TB, c C, closed func(error) bool) C {
	t.Helper()
	t.Cleanup(func() {
		if err := c.Check(); err != nil && (closed == nil || !closed(err)) {
			t.Errorf("Check after the test: %v", err)
		}
	})
	return c
}

// Rand is a seeded xorshift64* generator: deterministic for a seed, cheap
// enough for inner loops of model and crash tests, and printable (Seed) so
// that a failure replays. It is not safe for concurrent use.
type Rand struct {
	seed, s uint64
}

// NewRand returns a generator for seed (0 is replaced by a fixed odd
// constant: xorshift's state must not be zero).
func NewRand(seed uint64) *Rand {
	s := seed
	if s == 0 {
		s = 0x9e3779b97f4a7c15
	}
	return &Rand{seed: seed, s: s}
}

// Seed returns the seed the generator started from.
func (r *Rand) Seed() uint64 { return r.seed }

// Uint64 returns the next 64 pseudo-random bits.
func (r *Rand) Uint64() uint64 {
	r.s ^= r.s >> 12
	r.s ^= r.s << 25
	r.s ^= r.s >> 27
	return r.s * 0x2545f4914f6cdd1d
}

// Intn returns a number in [0, n); n must be positive.
func (r *Rand) Intn(n int) int {
	if n <= 0 {
		panic("structtest: Intn of a non-positive bound")
	}
	return int(r.Uint64() % uint64(n))
}

// Fill fills b with pseudo-random bytes.
func (r *Rand) Fill(b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
}

// MapFile maps a new file of size bytes in t's temporary directory (an
// ordinary file: the msync path) and returns it with a function that
// closes it and maps the file again read-only, closed when t ends: how the
// tests of a structure in a read-only region get one.
func MapFile(t testing.TB, size int) (rw *persist.Region, reopenReadOnly func() *persist.Region) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "region.pm")
	rw, err := persist.Map(path, &persist.Options{Size: int64(size), Create: true})
	if err != nil {
		t.Fatalf("map %d bytes at %s: %v", size, path, err)
	}
	t.Cleanup(func() { rw.Close() })
	return rw, func() *persist.Region {
		t.Helper()
		if err := rw.Close(); err != nil {
			t.Fatalf("close %s: %v", path, err)
		}
		ro, err := persist.Map(path, &persist.Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("map %s read-only: %v", path, err)
		}
		t.Cleanup(func() { ro.Close() })
		return ro
	}
}
