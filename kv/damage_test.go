package kv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// segFile is the file of segment seg of device dev.
func segFile(o *Options, dev, seg int) string { return filepath.Join(o.Devices[dev], segName(seg)) }

// patchFile applies fn to the bytes of a closed store's file.
func patchFile(t *testing.T, path string, fn func(b []byte)) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	fn(b)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// TestDamagedValueCostsItsKey: one flipped value byte of a live record in
// a sealed data segment with garbage (a victim of the start-up GC pass).
// Open works — the pass does not move the record, keeps its segment and
// goes on —, the key reads ErrCorrupt, Check reports it, every other key
// reads its value, and later passes succeed and skip the segment. (The
// start-up pass failed Open with ErrCorrupt.)
func TestDamagedValueCostsItsKey(t *testing.T) {
	o := testOptions(t, 1)
	o.WorkersPerDevice = 1
	s := mustOpen(t, o)
	want := map[string][]byte{}
	for i := range 160 {
		k := fmt.Sprintf("k%03d", min(i, 20+i%20)) // k000..k019 once, the others again and again
		v := append(fmt.Appendf(nil, "%s-%d-", k, i), bytes.Repeat([]byte{'v'}, 900)...)
		require.NoError(t, s.Put([]byte(k), v))
		want[k] = v
	}
	// A key whose latest version lies in a sealed segment with garbage.
	var victim string
	var at loc
	for k := range want {
		l, ok := s.idx.lookup([]byte(k))
		require.True(t, ok)
		g := s.devs[0].segs[l.seg]
		if g.sealed && g.live.Load() < int64(g.size-bodyOff)*9/10 {
			victim, at = k, l
			break
		}
	}
	require.NotEmpty(t, victim, "no live record in a sealed segment with garbage")
	require.NoError(t, s.Close())
	patchFile(t, segFile(o, 0, int(at.seg)), func(b []byte) { b[int(at.off)+int(at.klen)+3] ^= 0x10 })

	for round := range 2 {
		s, err := Open(o)
		require.NoError(t, err, "round %d: open with a damaged value", round)
		require.Equal(t, 1, s.Recovery().GC.Quarantined, "round %d", round)
		_, err = s.Get([]byte(victim))
		require.ErrorIs(t, err, ErrCorrupt, "round %d: the damaged key", round)
		for k, v := range want {
			if k != victim {
				got, err := s.Get([]byte(k))
				require.NoError(t, err, "round %d: %s", round, k)
				require.Equal(t, v, got)
			}
		}
		require.ErrorIs(t, s.Check(), ErrCorrupt, "round %d", round)
		for range 2 {
			rep, err := s.GC()
			require.NoError(t, err, "round %d: a later pass", round)
			require.Zero(t, rep.Quarantined, "round %d: the quarantined segment is not picked again", round)
		}
		_, err = s.Get([]byte(victim))
		require.ErrorIs(t, err, ErrCorrupt, "round %d: the damaged key after the passes", round)
		require.NoError(t, s.Close())
	}
}
