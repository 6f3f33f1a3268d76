package kv

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
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
	// A checkpoint written before the bucket directory reads as one bucket.
	text, err := os.ReadFile("testdata/checkpoint_format1.hex")
	require.NoError(t, err)
	old, err := structtest.ParseDump(string(text))
	require.NoError(t, err)
	v, err := decodeCheckpoint(old, 0x0123456789abcdef)
	require.NoError(t, err)
	require.Equal(t, ck, v.decoded())
	require.Equal(t, old, encodeFormat1(ck, 0x0123456789abcdef))
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
	require.Equal(t, ck, got.decoded())
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

// TestCheckpointBuckets: a checkpoint of more entries than a bucket holds
// has a directory; an entry outside its key's bucket, with the checksum
// made to hold, is ErrCorrupt (a lookup would not find it there).
func TestCheckpointBuckets(t *testing.T) {
	ck := &checkpoint{seq: 1, maxSerial: 500, chains: []chainPos{{metaSeg: 1, metaEpoch: 1, off: 256}}}
	for i := range 100 {
		l := loc{serial: uint64(i + 1), epoch: 2, seg: 1, off: 256, vlen: 5, crc: 9, klen: 6}
		ck.recs = append(ck.recs, krec{key: fmt.Appendf(nil, "k%05d", i), l: l})
	}
	b := encodeCheckpoint(ck, 77)
	v, err := decodeCheckpoint(b, 77)
	require.NoError(t, err)
	require.Equal(t, bucketBits(100), v.bits)
	require.Equal(t, 2, v.bits)
	got := map[string]loc{}
	for _, r := range v.decoded().recs {
		got[string(r.key)] = r.l
	}
	require.Len(t, got, 100)
	for _, r := range ck.recs {
		require.Equal(t, r.l, got[string(r.key)])
	}
	// Bucket 0 ends one entry later: bucket 1's first entry moves into it.
	le := binary.LittleEndian
	at := len(b) - 4 - len(v.ents) - len(v.dir) + 8
	le.PutUint64(b[at:], le.Uint64(b[at:])+ckEntrySize+6)
	le.PutUint32(b[len(b)-4:], persist.CRC32C(b[64:len(b)-4]))
	_, err = decodeCheckpoint(b, 77)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "lies in bucket 0, its key's is 1")
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
	var many checkpoint
	for i := range 40 {
		many.recs = append(many.recs, krec{key: fmt.Appendf(nil, "k%d", i), l: l})
	}
	many.maxSerial = 3
	f.Add(encodeCheckpoint(&many, 5))
	f.Add(encodeFormat1(&many, 5))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCheckpoint(b, 0)
		if err != nil {
			return
		}
		again := encodeCheckpoint(c.decoded(), binary.LittleEndian.Uint64(b[32:]))
		if b[12]&ckptFlagBuckets != 0 {
			require.Equal(t, b, again)
		}
		c2, err := decodeCheckpoint(again, 0)
		require.NoError(t, err)
		require.Equal(t, c.decoded(), c2.decoded())
	})
}

// decoded is v with its entries as recs, in file order.
func (v *ckView) decoded() *checkpoint {
	c := v.checkpoint
	c.recs = nil
	v.each(func(k []byte, l loc) { c.recs = append(c.recs, krec{key: k, l: l}) })
	return &c
}
