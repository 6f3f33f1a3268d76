package kv

import (
	"encoding/binary"
	"testing"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// goldenHeader is a segment header as format writes it.
func goldenHeader(kind uint8) []byte {
	b := make([]byte, bodyOff)
	h := segHeader{kind: kind, size: 64 << 20, owner: 3, epoch: 0x1234, storeID: 0x0123456789abcdef}
	f := h.fields()
	pmheader.Encode(b, &f)
	k := dataKind
	if kind == kindMeta {
		k = metaKind
	}
	binary.LittleEndian.PutUint64(b, k.Magic)
	return b
}

func TestGolden(t *testing.T) {
	structtest.Golden(t, "data_segment_header", goldenHeader(kindData))
	structtest.Golden(t, "meta_segment_header", goldenHeader(kindMeta))

	var log []byte
	const epoch = 0x1234
	add := func(e entry) {
		b := make([]byte, entrySize)
		encodeEntry(b, &e, epoch)
		log = append(log, b...)
	}
	key, val := []byte("user0001"), []byte("a value of 20 bytes.")
	add(entry{serial: 0x77, off: 5, vlen: 256, first: true})                                            // marker: data segment 5, epoch 0x77, log end 256; a batch start
	add(entry{serial: 42, klen: len(key), off: 256, vlen: uint32(len(val)), crc: recordCRC(key, val)})  // put
	add(entry{serial: 43, klen: len(key), off: 288, tomb: true, crc: recordCRC(key, nil), first: true}) // delete, a batch start
	// A put with a deadline: its record ends with it, its length counted.
	dl := binary.LittleEndian.AppendUint64(nil, 1_767_225_600_000) // 2026-01-01 00:00:00 UTC in ms
	add(entry{serial: 44, klen: len(key), off: 296, vlen: uint32(len(val) + len(dl)), ttl: true, crc: recordCRC(key, append(val, dl...))})
	add(entry{serial: 0x78, off: 6, vlen: 256}) // marker: data segment 6, not a batch start
	structtest.Golden(t, "meta_entries", log)

	rec := make([]byte, recSize(len(key), len(val)))
	copy(rec, key)
	copy(rec[len(key):], val)
	structtest.Golden(t, "data_record", rec)
	rec = make([]byte, recSize(len(key), len(val)+len(dl)))
	copy(rec, key)
	copy(rec[len(key):], val)
	copy(rec[len(key)+len(val):], dl)
	structtest.Golden(t, "data_record_deadline", rec)

	l := loc{serial: 42, epoch: 0x77, seg: 5, off: 256, vlen: uint32(len(val)), crc: recordCRC(key, val), dev: 1, klen: uint16(len(key))}
	ck := &checkpoint{seq: 9, maxSerial: 43, floor: 44, lastEpoch: 0x1234,
		chains: []chainPos{{dev: 1, owner: 0, metaSeg: 2, metaEpoch: 0x1234, off: 328, dataSeg: 5, dataEpoch: 0x77, dataOff: 296}},
		recs:   []krec{{key: key, l: l}}}
	structtest.Golden(t, "checkpoint", encodeCheckpoint(ck, 0x0123456789abcdef))
}

func TestEntryRoundTrip(t *testing.T) {
	b := make([]byte, entrySize)
	for _, e := range []entry{
		{serial: 1, klen: 1, off: 256, vlen: 0, crc: 7},
		{serial: serialMask, klen: MaxKeyLimit, off: 1 << 30, vlen: vlenMask, crc: 0xffffffff},
		{serial: 5, klen: 3, off: 264, tomb: true, crc: 1},
		{serial: 9, off: 12, vlen: 4096},
		{serial: 9, off: 12, vlen: 1<<31 - 4096}, // a marker's log end takes 31 bits
		{serial: 6, klen: 3, off: 264, vlen: 108, ttl: true, crc: 2},
		{serial: 6, klen: 3, off: 264, vlen: deadlineSize, ttl: true, crc: 2}, // an empty value
		{serial: 9, off: 12, vlen: 4096, first: true},
		{serial: 6, klen: 2, off: 1 << 20, vlen: 3, crc: 1, first: true},
	} {
		encodeEntry(b, &e, 99)
		got, st := decodeEntry(b, 99)
		require.Equal(t, entryOK, st)
		require.Equal(t, e, got)
		_, st = decodeEntry(b, 100) // another epoch: a recycled segment's leftover
		require.Equal(t, entryBad, st)
		for i := range b {
			b[i] ^= 0x10
			_, st = decodeEntry(b, 99)
			require.NotEqual(t, entryOK, st, "flip in byte %d", i)
			b[i] ^= 0x10
		}
	}
	_, st := decodeEntry(make([]byte, entrySize), 1)
	require.Equal(t, entryEnd, st)
	// A deadline bit on a tombstone, or on a value too short to hold the
	// deadline, is no entry any build writes.
	for _, e := range []entry{{serial: 5, klen: 3, off: 264, tomb: true, ttl: true, crc: 1}, {serial: 6, klen: 3, off: 264, vlen: 7, ttl: true, crc: 2}} {
		encodeEntry(b, &e, 99)
		_, st = decodeEntry(b, 99)
		require.Equal(t, entryBad, st, "%+v", e)
	}
}

func TestCheckpointDecode(t *testing.T) {
	l := loc{serial: 3, epoch: 2, seg: 1, off: 256, vlen: 5, crc: 9, klen: 2}
	ck := &checkpoint{seq: 1, maxSerial: 3, floor: 4, lastEpoch: 2, chains: []chainPos{{metaSeg: 1, metaEpoch: 1, off: 256}}, recs: []krec{{key: []byte("ab"), l: l}}}
	b := encodeCheckpoint(ck, 77)
	got, err := decodeCheckpoint(b, 77)
	require.NoError(t, err)
	require.Equal(t, ck, got)
	_, err = decodeCheckpoint(b, 78)
	require.ErrorIs(t, err, ErrBadFormat)
	for i := 64; i < len(b); i++ {
		b[i] ^= 1
		_, err = decodeCheckpoint(b, 77)
		require.ErrorIs(t, err, ErrCorrupt, "flip in byte %d", i)
		b[i] ^= 1
	}
	_, err = decodeCheckpoint(b[:len(b)-1], 77)
	require.ErrorIs(t, err, ErrCorrupt)
	copy(b, "braidPGL")
	_, err = decodeCheckpoint(b, 77)
	require.ErrorIs(t, err, ErrBadFormat)
	require.ErrorContains(t, err, "pagelog")
}

func FuzzEntry(f *testing.F) {
	b := make([]byte, entrySize)
	encodeEntry(b, &entry{serial: 42, klen: 8, off: 256, vlen: 20, crc: 5}, 7)
	f.Add(b, uint64(7))
	b = make([]byte, entrySize)
	encodeEntry(b, &entry{serial: 43, klen: 8, off: 256, vlen: 28, ttl: true, crc: 6}, 7)
	f.Add(b, uint64(7))
	f.Add(make([]byte, entrySize), uint64(1))
	f.Fuzz(func(t *testing.T, b []byte, epoch uint64) {
		if len(b) < entrySize {
			return
		}
		e, st := decodeEntry(b, epoch)
		if st != entryOK {
			return
		}
		// What decodes re-encodes to the same bytes.
		c := make([]byte, entrySize)
		encodeEntry(c, &e, epoch)
		require.Equal(t, b[:entrySize], c)
	})
}

func FuzzSegmentHeader(f *testing.F) {
	f.Add(goldenHeader(kindData))
	f.Add(goldenHeader(kindMeta))
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeSegHeader(b)
		if err != nil || h.kind == kindFree {
			return
		}
		require.NotZero(t, h.epoch)
	})
}

func FuzzCheckpoint(f *testing.F) {
	l := loc{serial: 3, epoch: 2, seg: 1, off: 256, vlen: 5, crc: 9, klen: 2}
	f.Add(encodeCheckpoint(&checkpoint{seq: 1, maxSerial: 3, chains: []chainPos{{off: 256}}, recs: []krec{{key: []byte("ab"), l: l}}}, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCheckpoint(b, 0)
		if err != nil {
			return
		}
		require.Equal(t, b, encodeCheckpoint(c, binary.LittleEndian.Uint64(b[32:])))
	})
}
