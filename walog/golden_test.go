package walog_test

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// TestGolden compares the bytes walog writes with the golden media files
// in testdata: the header of a log of each format, and each format's
// entries, checksummed and raw — a single append and a batch of two (the
// more flag). A layout
// change fails here until the format version changes with it (then
// go test -run TestGolden -update-golden).
func TestGolden(t *testing.T) {
	for _, f := range formats {
		for _, raw := range []bool{false, true} {
			name := f.String()
			if raw {
				name += "-raw"
			}
			t.Run(name, func(t *testing.T) {
				r := anon(t, 8192)
				l := mustCreate(t, r, &walog.Options{Format: f, Chunk: 1024, MaxEntry: 100, MaxBatch: 512, NoChecksum: raw})
				_, err := l.Append([]byte("golden entry"))
				require.NoError(t, err)
				_, err = l.AppendBatch([][]byte{[]byte("first of a batch"), []byte("last")})
				require.NoError(t, err)
				tail := walog.HeaderSize + l.Stats().Used
				require.NoError(t, l.Close())
				mem := r.Bytes()
				if !raw {
					structtest.Golden(t, fmt.Sprintf("header-%s", f), mem[:walog.HeaderSize])
				}
				structtest.Golden(t, fmt.Sprintf("entries-%s", name), mem[walog.HeaderSize:tail])
			})
		}
	}
}
