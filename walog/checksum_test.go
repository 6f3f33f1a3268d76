package walog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// castagnoli is hash/crc32's CRC-32C table: the reference the format's
// checksums are tested against.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var cutoffs = []int{1, 7, 8, 9, 63, 64, 65, 255, 256, 257, 503, 504, 505, 4095, 4096, 4097, 7000}

// TestChecksumTwins checks the two ways appends checksum and count an
// entry against each other: over the bytes staged in DRAM (entries that fit
// in the stage) and from the entry's parts (longer ones), over lengths
// around the cut-offs of the encodings.
func TestChecksumTwins(t *testing.T) {
	rng := structtest.NewRand(7<<32 | 7)
	for _, n := range cutoffs {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint64())
		}
		for _, more := range []bool{false, true} {
			seq := rng.Uint64() >> 8
			lf := lenField(n, more)
			// The format's checksum, by hash/crc32: what the asm
			// routines must reproduce (logs written before them read
			// the same).
			ref := crc32.Update(crc32.Update(lf, castagnoli, binary.LittleEndian.AppendUint64(nil, seq)), castagnoli, p)
			t.Run(fmt.Sprintf("%d/more=%v", n, more), func(t *testing.T) {
				for _, f := range []Format{PopLog, RAWL, Classic} {
					for _, v := range []uint64{0, 1} {
						l := &Log{format: f, v: v, stage: make([]byte, stageSize)}
						switch f {
						case PopLog:
							require.NoError(t, l.writePop(seq, p, more))
							e := l.stage[:l.eN]
							crc := binary.LittleEndian.Uint32(e[16+n:])
							require.Equal(t, ref, crc)
							require.Equal(t, ref, seqDataCRC(lf, seq, p))
							pop := popcount(p) + bits.OnesCount32(crc) + bits.OnesCount32(lf) + bits.OnesCount64(seq)
							require.Equal(t, popcount(e)-bits.OnesCount32(uint32(pop)), pop)
							require.Equal(t, uint32(pop), binary.LittleEndian.Uint32(e[4:]))
						case Classic:
							w0, err := l.writeClassic(seq, p, more)
							require.NoError(t, err)
							require.Equal(t, uint64(lf)|uint64(ref)<<32, w0)
						case RAWL:
							require.NoError(t, l.writeRAWL(seq, p, more))
							lo := rawlLow(v, n, more)
							require.Equal(t, rawlCRC(lo, v, seq, p), binary.LittleEndian.Uint32(l.stage[4:]))
							require.Equal(t, crc32.Update(lo, castagnoli, l.stage[8:l.eN]), binary.LittleEndian.Uint32(l.stage[4:]))
							require.Equal(t, lf, rawlLenField(lo))
						}
						require.Equal(t, f.footprint(n), l.eN)
					}
				}
			})
		}
	}
}

// TestCheckedWord: the check byte of the header's changing words catches
// every flip of one, two or three bits.
func TestCheckedWord(t *testing.T) {
	for _, v := range []uint64{0, 1, 256, 0xdeadbeef, 1 << 55, wordMask} {
		w := checkedWord(v)
		got, ok := wordValue(w)
		require.True(t, ok)
		require.Equal(t, v, got)
		for i := range 64 {
			for j := i; j < 64; j++ {
				for k := j; k < 64; k++ {
					x := w ^ 1<<i ^ 1<<j ^ 1<<k // one bit (i=j=k), or three, or one (two equal)
					if x == w {
						continue
					}
					_, ok := wordValue(x)
					require.False(t, ok, "bits %d %d %d of %#x", i, j, k, w)
				}
				if i != j {
					_, ok := wordValue(w ^ 1<<i ^ 1<<j)
					require.False(t, ok, "bits %d %d of %#x", i, j, w)
				}
			}
		}
	}
}

// TestIsZero: every length around the zero block's size, all zero, and
// with one set bit at the first, a middle and the last byte.
func TestIsZero(t *testing.T) {
	buf := make([]byte, 3*len(zeroBlock)+9)
	for _, n := range append(cutoffs, 0, 4095+4096, 4096+4096, 4097+4096, len(buf)) {
		b := buf[:n]
		require.True(t, isZero(b), n)
		for _, i := range []int{0, n / 2, n - 1} {
			if n == 0 {
				continue
			}
			b[i] = 0x10
			require.False(t, isZero(b), "n=%d i=%d", n, i)
			b[i] = 0
		}
	}
}
