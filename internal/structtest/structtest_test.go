package structtest_test

import (
	"errors"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

func TestRand(t *testing.T) {
	a, b := structtest.NewRand(7), structtest.NewRand(7)
	seen := map[uint64]bool{}
	for range 1000 {
		x := a.Uint64()
		require.Equal(t, x, b.Uint64())
		seen[x] = true
	}
	require.Len(t, seen, 1000)
	require.Equal(t, uint64(7), a.Seed())
	z := structtest.NewRand(0)
	require.NotZero(t, z.Uint64())
	for range 100 {
		require.Less(t, a.Intn(10), 10)
	}
	buf := make([]byte, 13)
	a.Fill(buf)
	require.NotEqual(t, make([]byte, 13), buf)
}

func TestDump(t *testing.T) {
	b := []byte("braidWAL and some more bytes than sixteen")
	got, err := structtest.ParseDump("# a comment\n" + structtest.Dump(b))
	require.NoError(t, err)
	require.Equal(t, b, got)
	_, err = structtest.ParseDump("0010: 00\n")
	require.Error(t, err)
}

type checker struct{ err error }

func (c *checker) Check() error { return c.err }

// Checked runs Check when the test ends, and a failing Check fails it.
func TestChecked(t *testing.T) {
	errClosed := errors.New("closed")
	t.Run("ok", func(t *testing.T) { structtest.Checked(t, &checker{}, nil) })
	t.Run("closed", func(t *testing.T) {
		structtest.Checked(t, &checker{err: errClosed}, func(err error) bool { return errors.Is(err, errClosed) })
	})
	ft := &fakeT{TB: t}
	structtest.Checked(ft, &checker{err: errors.New("leaf 3 out of order")}, nil)
	ft.run()
	require.True(t, ft.failed)
}

type fakeT struct {
	testing.TB
	cleanups []func()
	failed   bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) run() {
	for _, c := range f.cleanups {
		c()
	}
}
