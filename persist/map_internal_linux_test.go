//go:build linux

package persist

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFileMode is the decision table of a file mapping's mode.
func TestFileMode(t *testing.T) {
	for _, c := range []struct {
		dax, eadr, force, fenceOnly, noInsn bool
		mode                                Mode
		forced                              bool
	}{
		{mode: ModeMsync},                                     // an ordinary file
		{eadr: true, mode: ModeMsync},                         // eADR says nothing without DAX
		{fenceOnly: true, mode: ModeMsync},                    // FenceOnly alone: still msync
		{dax: true, mode: ModeFlush},                          // real PMem
		{dax: true, eadr: true, mode: ModeEADR},               // caches in the domain
		{dax: true, fenceOnly: true, mode: ModeEADR},          // BRAID_NO_FLUSH
		{dax: true, force: true, mode: ModeFlush},             // forcing real PMem is not "forced"
		{dax: true, noInsn: true, mode: ModeMsync},            // no flush instruction in this build
		{dax: true, eadr: true, noInsn: true, mode: ModeEADR}, // fences need none
		{force: true, mode: ModeFlush, forced: true},          // tmpfs on the PMem path
		{force: true, fenceOnly: true, mode: ModeEADR, forced: true},
		{force: true, eadr: true, mode: ModeFlush, forced: true}, // eADR only counts with DAX
		{force: true, noInsn: true, mode: ModeMsync, forced: true},
	} {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			cfg := config{force: c.force, fenceOnly: c.fenceOnly, flush: FlushCLWB}
			if c.noInsn {
				cfg.flush = FlushAuto
			}
			mode, forced := fileMode(c.dax, c.eadr, cfg)
			require.Equal(t, c.mode, mode)
			require.Equal(t, c.forced, forced)
		})
	}
}

// TestMapSize is the table of Map's size rule.
func TestMapSize(t *testing.T) {
	for _, c := range []struct {
		want, have int64
		created    bool
		size       int64
		err        error
	}{
		{want: 4096, have: 0, created: true, size: 4096},
		{want: 0, have: 8192, size: 8192},
		{want: 4096, have: 8192, size: 4096},
		{want: 8192, have: 8192, size: 8192},
		{want: 0, have: 0, err: ErrInvalid},
		{want: 8193, have: 8192, err: ErrTooSmall},
	} {
		size, err := mapSize("f.pm", c.want, c.have, c.created)
		if c.err != nil {
			require.ErrorIs(t, err, c.err, "%+v", c)
			require.ErrorContains(t, err, "f.pm")
			continue
		}
		require.NoError(t, err, "%+v", c)
		require.Equal(t, c.size, size, "%+v", c)
	}
}
