package pagelog

import (
	"testing"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/stretchr/testify/require"
)

// TestCreatingMagic: the magic of a Create in progress is the registry's
// (whose TestRegistry keeps it at least 16 bits from every other magic, so
// that no damage of a few bits turns a store's magic into "a Create did
// not finish", which Open reports as ErrNoStore).
func TestCreatingMagic(t *testing.T) {
	name, ok := pmheader.Known(creatingMagic)
	require.True(t, ok)
	require.Contains(t, name, "pagelog store whose Create did not finish")
}
