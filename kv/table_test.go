package kv

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// TestTableModel runs random inserts, updates, removes, shrinks and
// compactions of short (inline) and long (arena) keys on one flat table
// against a Go map; tiny hash spaces force long probe runs and the
// wrap-around of backward-shift deletion. With step 1 a growth moves one
// old slot (or run) per operation, so that most operations meet a table
// whose entries are split between its two arrays; the default step is
// checked too.
func TestTableModel(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		step int
	}{{1, 0}, {2, 0}, {3, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 2}} {
		seed := tc.seed
		t.Run(fmt.Sprintf("seed=%d/step=%d", seed, tc.step), func(t *testing.T) {
			rnd := structtest.NewRand(seed)
			tb := table{step: tc.step}
			model := map[string]loc{}
			growing, grows := 0, 0
			hashOf := func(k string) uint32 {
				if seed == 3 {
					return uint32(len(k)%5) + 1 // collisions everywhere
				}
				return tag(keyHash([]byte(k)))
			}
			key := func() string {
				n := rnd.Intn(300)
				if rnd.Intn(2) == 0 {
					return fmt.Sprintf("k%d", n)
				}
				return fmt.Sprintf("a long key of more than %d bytes, number %d", inlineKey, n)
			}
			for i := range 5000 {
				k := key()
				h := hashOf(k)
				j := tb.find(h, []byte(k))
				want, ok := model[k]
				require.Equal(t, ok, j >= 0, "op %d: find %q", i, k)
				if ok {
					require.Equal(t, want, tb.at(j).loc(), "op %d: %q", i, k)
					require.Equal(t, k, string(tb.keyOf(j, nil)))
				}
				wasGrowing := tb.old != nil
				switch op := rnd.Intn(10); {
				case op < 5:
					l := loc{serial: uint64(i + 1), epoch: 7, seg: uint32(rnd.Intn(9)), off: uint32(i * 8), klen: uint16(len(k))}
					if rnd.Intn(4) == 0 {
						l.vlen = tombBit
					}
					if ok {
						tb.set(j, l)
					} else {
						tb.insert(h, []byte(k), l)
					}
					model[k] = l
				case op < 8 && ok:
					tb.remove(j)
					delete(model, k)
				case op == 9 && i%100 == 0:
					tb.shrink()
					tb.compact()
				}
				if tb.old != nil {
					growing++
					if !wasGrowing {
						grows++
					}
				}
				if i%1250 == 0 || tb.old != nil && i%7 == 0 {
					checkTable(t, &tb, model)
				}
			}
			checkTable(t, &tb, model)
			// The operations met growth in progress (step 1: often).
			require.Positive(t, grows, "no growth started")
			if tc.step == 1 {
				require.Greater(t, growing, 100, "operations during growth")
			}
			tb.settle()
			require.Nil(t, tb.old)
			checkTable(t, &tb, model)
			tb.check()
		})
	}
}

// checkTable: the table holds exactly the model, its counters agree, and
// every entry is reachable from its home slot.
func checkTable(t *testing.T, tb *table, model map[string]loc) {
	t.Helper()
	seen, tombs, keyB := 0, 0, int64(0)
	for j := range tb.slotCount() {
		s := tb.at(j)
		if s.h == 0 {
			continue
		}
		k := string(tb.keyOf(j, nil))
		if model[k] != s.loc() {
			t.Fatalf("slot %d key %q holds %+v, want %+v", j, k, s.loc(), model[k])
		}
		if at := tb.find(s.h, []byte(k)); at != j {
			t.Fatalf("key %q in slot %d found at %d", k, j, at)
		}
		seen++
		keyB += int64(len(k))
		if s.vlen&tombBit != 0 {
			tombs++
		}
	}
	require.Equal(t, len(model), seen)
	require.Equal(t, len(model), tb.n)
	require.Equal(t, tombs, tb.tombs)
	require.Equal(t, keyB, tb.keyB)
	require.LessOrEqual(t, tb.n*4, len(tb.slots)*maxLoad+4)
}

// TestTableLarge grows a table past hugeSlots (mapped arrays on Linux),
// shrinks it back, and checks it against a map on the way.
func TestTableLarge(t *testing.T) {
	var tb table
	model := map[string]loc{}
	n := hugeSlots
	for i := range n {
		k := fmt.Sprintf("key%d", i)
		l := loc{serial: uint64(i + 1), klen: uint16(len(k))}
		tb.insert(tag(keyHash([]byte(k))), []byte(k), l)
		model[k] = l
	}
	require.Greater(t, len(tb.slots), hugeSlots)
	checkTable(t, &tb, model)
	for i := range n - 100 {
		k := fmt.Sprintf("key%d", i)
		j := tb.find(tag(keyHash([]byte(k))), []byte(k))
		if j < 0 {
			t.Fatalf("key %q not found", k)
		}
		tb.remove(j)
		delete(model, k)
	}
	tb.shrink()
	require.Less(t, len(tb.slots), hugeSlots)
	checkTable(t, &tb, model)
}
