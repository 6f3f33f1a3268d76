package structtest

import (
	"bytes"
	"testing"
)

// Objects is an array of same-sized objects updated in place, failure
// atomically: cow.Array, fam.Array and fam.LogArray.
type Objects interface {
	Update(i int, val []byte) error
	Read(i int, dst []byte) error
	Len() int
	Size() int
	Close() error
}

// ObjectModel is the model test shared by cow and fam: ops operations drawn
// from seed against a, each checked against a plain slice of the values
// last written — 55% Update of a random object with random bytes, 43% Read
// compared with the model (zeros before the first Update), 2% Close and
// reopen. It fails t at the first difference, naming the seed, the
// operation and the object, and returns the handle open at the end.
func ObjectModel(t testing.TB, a Objects, reopen func() (Objects, error), seed uint64, ops int) Objects {
	t.Helper()
	rng := NewRand(seed)
	n, size := a.Len(), a.Size()
	model := make([][]byte, n)
	for i := range model {
		model[i] = make([]byte, size)
	}
	buf := make([]byte, size)
	for op := range ops {
		i := rng.Intn(n)
		switch x := rng.Intn(100); {
		case x < 55:
			v := make([]byte, size)
			rng.Fill(v)
			if err := a.Update(i, v); err != nil {
				t.Fatalf("seed %d op %d: Update(%d): %v", seed, op, i, err)
			}
			model[i] = v
		case x < 98:
			if err := a.Read(i, buf); err != nil {
				t.Fatalf("seed %d op %d: Read(%d): %v", seed, op, i, err)
			}
			if !bytes.Equal(buf, model[i]) {
				t.Fatalf("seed %d op %d: object %d reads %x, want %x", seed, op, i, buf, model[i])
			}
		default:
			if err := a.Close(); err != nil {
				t.Fatalf("seed %d op %d: Close: %v", seed, op, err)
			}
			var err error
			if a, err = reopen(); err != nil {
				t.Fatalf("seed %d op %d: reopen: %v", seed, op, err)
			}
			if a.Len() != n || a.Size() != size {
				t.Fatalf("seed %d op %d: reopened with %d objects of %d bytes, want %d of %d", seed, op, a.Len(), a.Size(), n, size)
			}
		}
	}
	return a
}
