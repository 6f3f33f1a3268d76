package pagelog

import (
	"math/bits"
	"testing"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/stretchr/testify/require"
)

// TestCreatingMagic: the magic of a Create in progress differs from every
// registered magic (pagelog's own included) in at least 16 bits, so no
// damage of a few bits turns a store's magic into "a Create did not
// finish", which Open reports as ErrNoStore.
func TestCreatingMagic(t *testing.T) {
	for _, k := range pmheader.Kinds {
		m := pmheader.Magic(k.Magic)
		if m == creatingMagic {
			continue
		}
		require.GreaterOrEqual(t, bits.OnesCount64(m^creatingMagic), 16, "%s", k.Magic)
	}
	name, ok := pmheader.Known(creatingMagic)
	require.True(t, ok)
	require.Contains(t, name, "pagelog store whose Create did not finish")
}
