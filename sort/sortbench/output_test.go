package sortbench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort/record"
	"github.com/stretchr/testify/require"
)

// Generate refuses to replace a read-only file (gensort's fopen would
// fail on it), follows a symbolic link to its file, and writes a pipe in
// order, byte for byte what it writes to a file.
func TestGenerateOutputs(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.WriteFile(ro, []byte("keep"), 0o444))
	_, err := Generate(context.Background(), ro, GenOptions{Count: 10}, false)
	require.ErrorIs(t, err, ErrReadOnly)
	require.ErrorIs(t, err, persist.ErrReadOnly)
	require.Contains(t, err.Error(), "read-only (mode 0444)")
	b, _ := os.ReadFile(ro)
	require.Equal(t, "keep", string(b))

	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	require.NoError(t, os.WriteFile(target, nil, 0o644))
	require.NoError(t, os.Symlink(target, link))
	_, err = Generate(context.Background(), link, GenOptions{Count: 10}, false)
	require.NoError(t, err)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is still a link")
	want, _, err := GenerateBytes(GenOptions{Count: 10})
	require.NoError(t, err)
	got, _ := os.ReadFile(target)
	require.Equal(t, want, got)

	// The stream is written a window of whole generator chunks at a time
	// (GenerateTo): the counts cross windows (of one chunk per thread).
	defer func(w int64) { streamWindow = w }(streamWindow)
	streamWindow = 1
	for _, o := range []GenOptions{
		{Count: 2*genChunk + 5, Threads: 2},
		{Count: genChunk + 1, ASCII: true, Skew: true, Start: U128(77), Threads: 1},
		{Count: genChunk + 7, Format: record.Format{KeySize: 8, KLV: true}, MaxValue: 30, Threads: 1},
		{Count: 5, Format: record.Format{KeySize: 4, ValueSize: 3}},
		{Count: 0},
	} {
		want, wres, err := GenerateBytes(o)
		require.NoError(t, err)
		r, w, err := os.Pipe()
		require.NoError(t, err)
		fifo := filepath.Join("/proc/self/fd", itoa(int(w.Fd())))
		done := make(chan []byte)
		go func() {
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(r)
			done <- buf.Bytes()
		}()
		res, err := Generate(context.Background(), fifo, o, false)
		require.NoError(t, err, "%+v", o)
		require.NoError(t, w.Close())
		got := <-done
		r.Close()
		require.Equal(t, len(want), len(got), "%+v", o)
		require.True(t, bytes.Equal(want, got), "%+v: the stream differs from the file", o)
		require.Equal(t, wres, res, "%+v", o)
	}
}

func itoa(i int) string { return string(appendInt(nil, i)) }

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

// Validate of a pipe reads it in order and reports what Validate of the
// same records in a file reports; a stream that ends inside a record is
// ErrBadFormat, naming the file.
func TestValidatePipe(t *testing.T) {
	defer func(w int64) { streamWindow = w }(streamWindow)
	streamWindow = 64 << 10
	klv := record.Format{KeySize: 10, KLV: true}
	for _, c := range []struct {
		o     GenOptions
		f     record.Format
		chop  int
		valid bool
	}{
		// Windows of 64 KiB here (8 MiB in use): the streams cross them.
		{GenOptions{Count: 5000}, record.Gensort, 0, true},
		{GenOptions{Count: 3000, Format: klv, MaxValue: 200}, klv, 0, true},
		{GenOptions{Count: 3, Format: klv, MinValue: 100 << 10, MaxValue: 200 << 10}, klv, 0, true}, // records larger than the window
		{GenOptions{Count: 1000}, record.Gensort, 30, false},
		{GenOptions{Count: 1000, Format: klv}, klv, 3, false},
	} {
		b, _, err := GenerateBytes(c.o)
		require.NoError(t, err)
		b = b[:len(b)-c.chop]
		vo := ValidateOptions{Format: c.f, Threads: 2}
		want, werr := ValidateBytes(context.Background(), b, vo)
		r, w, err := os.Pipe()
		require.NoError(t, err)
		go func() {
			_, _ = w.Write(b)
			w.Close()
		}()
		path := filepath.Join("/proc/self/fd", itoa(int(r.Fd())))
		got, err := Validate(context.Background(), path, vo)
		r.Close()
		if !c.valid {
			require.Error(t, werr)
			require.ErrorIs(t, err, ErrBadFormat)
			require.Contains(t, err.Error(), "sort: "+path+": bad record format: ")
			continue
		}
		require.NoError(t, werr)
		require.NoError(t, err)
		require.Equal(t, want.Records, got.Records)
		require.Equal(t, want.Checksum, got.Checksum)
		require.Equal(t, want.Unordered, got.Unordered)
		require.Equal(t, want.FirstUnordered, got.FirstUnordered)
		require.Equal(t, want.Duplicates, got.Duplicates)
		require.Equal(t, want.First, got.First)
		require.Equal(t, want.Last, got.Last)
	}
}
