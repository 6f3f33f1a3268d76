package structtest_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
)

// slice is an Objects in memory; lose drops every lose-th Update (0: none).
type slice struct {
	v       [][]byte
	lose, n int
}

func (s *slice) Update(i int, val []byte) error {
	s.n++
	if s.lose == 0 || s.n%s.lose != 0 {
		s.v[i] = append([]byte(nil), val...)
	}
	return nil
}
func (s *slice) Read(i int, dst []byte) error { copy(dst, s.v[i]); return nil }
func (s *slice) Len() int                     { return len(s.v) }
func (s *slice) Size() int                    { return len(s.v[0]) }
func (s *slice) Close() error                 { return nil }

func newSlice(n, size, lose int) *slice {
	s := &slice{lose: lose}
	for range n {
		s.v = append(s.v, make([]byte, size))
	}
	return s
}

// fatal records Fatalf and stops the calling function, as testing.T does.
type fatal struct {
	testing.TB
	msg string
}

type stop struct{}

func (f *fatal) Helper() {}
func (f *fatal) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(stop{})
}

func runModel(a structtest.Objects) (msg string) {
	f := &fatal{TB: nil}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
			msg = f.msg
		}
	}()
	structtest.ObjectModel(f, a, func() (structtest.Objects, error) { return a, nil }, 5, 2000)
	return ""
}

func TestObjectModel(t *testing.T) {
	require.Empty(t, runModel(newSlice(10, 12, 0)))
	msg := runModel(newSlice(10, 12, 7))
	require.Contains(t, msg, "seed 5 op ")
	require.Contains(t, msg, "reads")
}
