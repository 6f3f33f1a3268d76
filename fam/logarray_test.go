package fam

import (
	"encoding/binary"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

func TestRecordLen(t *testing.T) {
	for _, c := range []struct{ size, rec int }{
		{4, 32}, {8, 32}, {16, 32}, {20, 64}, {32, 64}, {48, 64}, {52, 128}, {64, 128}, {112, 128}, {116, 192}, {1024, 1088},
	} {
		require.Equal(t, c.rec, recordLen(c.size), "size %d", c.size)
	}
}

// The redo log restores an in-place write that did not finish, skips a
// torn record (and resets its lane), and refuses a complete record for an
// object that is not there.
func TestLogReplay(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	a, err := CreateLog(r, &LogOptions{ObjectSize: 16, Count: 10, Lanes: 2, LaneBytes: 1024})
	require.NoError(t, err)
	mem := r.Bytes()
	v := []byte("0123456789abcdef")
	require.NoError(t, a.Update(3, v))
	w := []byte("fedcba9876543210")
	require.NoError(t, a.Update(5, w))
	// Lane 1 holds both records, at 64 and 96.
	lane1 := a.laneOff(1)
	h := persist.Load64(mem[lane1+64:])
	require.Equal(t, uint64(32), h&0xffff)
	require.Equal(t, uint64(1), h>>32, "generation")

	// Scribble over object 3 in place, as a torn in-place write would.
	copy(mem[a.first+3*16:], "XXXXXXXXXXXXXXXX")
	require.NoError(t, a.Close())
	b, err := OpenLog(r, nil)
	require.NoError(t, err)
	require.Equal(t, 1, b.Replayed(), "object 5 was in place already")
	got := make([]byte, 16)
	require.NoError(t, b.Read(3, got))
	require.Equal(t, v, got)
	require.NoError(t, b.Read(5, got))
	require.Equal(t, w, got)
	// The lane was clean after its records: appends continue there.
	require.Equal(t, uint32(1), b.lanes[1].gen)
	require.Equal(t, 128, b.lanes[1].pos)
	require.NoError(t, b.Close())
	b2, err := OpenLog(r, nil)
	require.NoError(t, err)
	require.Equal(t, 0, b2.Replayed())

	// A torn record (a one bit missing) is not replayed, and its lane is
	// reset.
	require.NoError(t, b2.Update(1, v))
	copy(mem[b2.first+16:], "YYYYYYYYYYYYYYYY")
	mem[lane1+128+17] &^= 1 // v[1] = '1' = 0x31: clear its low bit
	require.NoError(t, b2.Close())
	b3, err := OpenLog(r, nil)
	require.NoError(t, err)
	require.Equal(t, 0, b3.Replayed())
	require.NoError(t, b3.Read(1, got))
	require.Equal(t, []byte("YYYYYYYYYYYYYYYY"), got)
	require.Equal(t, uint64(2), persist.Load64(mem[lane1:]), "new generation")
	require.Equal(t, make([]byte, 1024-64), mem[lane1+64:lane1+1024], "zeroed")
	require.Equal(t, 64, b3.lanes[1].pos)

	// A complete record (popcount right) naming a foreign object.
	require.NoError(t, b3.Update(7, v))
	require.NoError(t, b3.Close()) // the failed OpenLogs below claim nothing
	rec := mem[lane1+64 : lane1+96]
	binary.LittleEndian.PutUint64(rec[8:], 11) // the array holds 10
	hdr := persist.Load64(rec)
	persist.Store64(rec, hdr&^(0xffff<<16)|uint64(popcount(rec[8:]))<<16)
	_, err = OpenLog(r, nil)
	require.ErrorIs(t, err, ErrCorrupt)
	t.Log(err)
	binary.LittleEndian.PutUint64(rec[8:], 4) // in range, wrong lane
	persist.Store64(rec, hdr&^(0xffff<<16)|uint64(popcount(rec[8:]))<<16)
	_, err = OpenLog(r, nil)
	require.ErrorIs(t, err, persist.ErrCorrupt)
	// A wrong length with the current generation.
	persist.Store64(rec, hdr&^0xffff|64)
	_, err = OpenLog(r, nil)
	require.ErrorIs(t, err, ErrCorrupt)
	// A generation word that Create never writes.
	persist.Store64(rec, 0)
	persist.Store64(mem[lane1:], 0)
	_, err = OpenLog(r, nil)
	require.ErrorIs(t, err, ErrCorrupt)
}

// A lane that fills up is reset inside Update, and later records of the new
// generation are the only ones replayed.
func TestLogWrap(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	a, err := CreateLog(r, &LogOptions{ObjectSize: 16, Count: 4, Lanes: 1, LaneBytes: 64 + 4*32})
	require.NoError(t, err)
	v := make([]byte, 16)
	for i := range 10 {
		binary.LittleEndian.PutUint64(v, uint64(i))
		require.NoError(t, a.Update(i%4, v))
	}
	require.Equal(t, uint32(3), a.lanes[0].gen, "two resets")
	// Scribble over objects 0 and 1: their records (updates 8 and 9) are
	// in the current generation, so OpenLog restores them.
	mem := r.Bytes()
	copy(mem[a.first:], "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ")
	require.NoError(t, a.Close())
	b, err := OpenLog(r, nil)
	require.NoError(t, err)
	require.Equal(t, 2, b.Replayed())
	got := make([]byte, 16)
	for i := range 4 {
		require.NoError(t, b.Read(i, got))
		want := uint64(8 + i)
		if i >= 2 {
			want = uint64(4 + i)
		}
		require.Equal(t, want, binary.LittleEndian.Uint64(got), "object %d", i)
	}
}

func TestValidate(t *testing.T) {
	require.NoError(t, (&Options{Offset: 128, ObjectSize: 16, Count: 1}).Validate())
	require.NoError(t, (&LogOptions{Offset: 128, ObjectSize: 16, Count: 1}).Validate())
	for _, c := range []struct {
		opts interface{ Validate() error }
		want error
	}{
		{(*Options)(nil), ErrSize},
		{(*LogOptions)(nil), ErrSize},
		{&Options{ObjectSize: 6, Count: 1}, ErrSize},
		{&Options{ObjectSize: 16}, ErrInvalid},
		{&LogOptions{ObjectSize: 16}, ErrInvalid},
		{&Options{Offset: 32, ObjectSize: 16, Count: 1}, ErrInvalid},
		{&LogOptions{Offset: -64, ObjectSize: 16, Count: 1}, ErrInvalid},
		{&LogOptions{ObjectSize: 16, Count: 1, Lanes: 2000}, ErrInvalid},
		{&LogOptions{ObjectSize: 16, Count: 1, LaneBytes: 100}, ErrInvalid},
	} {
		err := c.opts.Validate()
		require.ErrorIs(t, err, c.want, "%+v", c.opts)
		require.ErrorIs(t, err, persist.ErrInvalid, "%+v", c.opts)
	}
}

// Check finds what a LogArray's lanes must not hold: a damaged record, a
// record of another lane, bytes after the last record, an object that
// differs from its latest record.
func TestLogCheck(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(a *LogArray, mem []byte)
	}{
		{"record popcount", func(a *LogArray, mem []byte) { mem[a.laneOff(0)+laneHead+20] ^= 1 }},
		{"record index", func(a *LogArray, mem []byte) { mem[a.laneOff(0)+laneHead+8] ^= 1 }},
		{"after the last record", func(a *LogArray, mem []byte) { mem[a.laneOff(1)+a.laneBytes-1] = 1 }},
		{"object in place", func(a *LogArray, mem []byte) { mem[a.first+2*a.ostride] ^= 1 }},
		{"generation word", func(a *LogArray, mem []byte) { mem[a.laneOff(1)] ^= 2 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := structtest.Region(t, 1<<16)
			a, err := CreateLog(r, &LogOptions{ObjectSize: 16, Count: 10, Lanes: 2, LaneBytes: 1024})
			require.NoError(t, err)
			for i := range 4 {
				require.NoError(t, a.Update(i, make([]byte, 16)))
				require.NoError(t, a.Update(i, []byte("0123456789abcdef")))
			}
			require.NoError(t, a.Check())
			c.damage(a, r.Bytes())
			err = a.Check()
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorIs(t, err, persist.ErrCorrupt)
			t.Log(err)
		})
	}
}
