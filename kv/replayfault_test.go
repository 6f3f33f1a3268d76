//go:build linux

package kv

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/persist"
)

// TestReplayFault: a fault during recovery's replay that no region listed
// (here the page of a metadata log made unreadable behind persist's back,
// as a segment file truncated under its mapping would be) fails Open with
// an error wrapping persist.ErrMedia naming the device, not the process.
func TestReplayFault(t *testing.T) {
	o := testOptions(t, 1)
	s := mustOpen(t, o)
	for i := range 200 {
		require.NoError(t, s.Put([]byte{'k', byte(i)}, []byte("value")))
	}
	s.abandon() // no checkpoint: the reopen replays the logs
	ps := os.Getpagesize()
	var hit []byte
	testBeforeReplay = func(s *Store) {
		for _, g := range s.devs[0].list() {
			if g.kind == kindMeta {
				hit = g.mem[:ps]
				require.NoError(t, syscall.Mprotect(hit, syscall.PROT_NONE))
				return
			}
		}
	}
	defer func() { testBeforeReplay = nil }()
	_, err := Open(o)
	require.Error(t, err)
	require.ErrorIs(t, err, persist.ErrMedia)
	require.Contains(t, err.Error(), "recovery of device")
	require.NotNil(t, hit, "a metadata segment was found")
	testBeforeReplay = nil
	s = mustOpen(t, o) // the file is whole: a new Open recovers every key
	for i := range 200 {
		v, err := s.Get([]byte{'k', byte(i)})
		require.NoError(t, err)
		require.Equal(t, "value", string(v))
	}
	require.NoError(t, s.Close())
}
