package sortbench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/braid-pm/braid/sort/record"
)

// Streams: gensort writes to a pipe or a terminal and valsort reads a
// pipe. A stream cannot be mapped, so these read and write it in order, a
// window of records at a time, each window generated or validated in
// parallel like a file.

// streamWindow is the bytes of records one step of a stream holds (a
// variable: tests make it small, to cross windows with few records).
var streamWindow int64 = 8 << 20

// GenerateTo writes the records o describes to w, in order: the same
// bytes Generate writes to a file.
func GenerateTo(ctx context.Context, w io.Writer, o GenOptions) (GenResult, error) {
	if err := o.normalize(); err != nil {
		return GenResult{}, err
	}
	if err := o.checkSize(-1, ""); err != nil {
		return GenResult{}, err
	}
	// Whole chunks of the generator per window, so that every record is
	// made as Generate makes it.
	per := int64(o.Format.RecordSize())
	if o.Format.KLV {
		per = int64(o.Format.KeySize+record.KLVHeader) + int64(o.MinValue+o.MaxValue)/2
	}
	window := max(1, streamWindow/(genChunk*per)) * genChunk * int64(o.Threads)
	res := GenResult{Records: o.Count}
	for first := uint64(0); first < o.Count; first += uint64(window) {
		wo := o
		wo.Start, wo.Count = o.Start.Add64(first), min(uint64(window), o.Count-first)
		b, r, err := generateBytes(ctx, wo)
		if err != nil {
			return res, err
		}
		if _, err := w.Write(b); err != nil {
			return res, err
		}
		res.Bytes += r.Bytes
		res.Checksum = res.Checksum.Add(r.Checksum)
	}
	return res, nil
}

// ValidateReader is Validate of a stream (a pipe, standard input): the
// records are read in order, a window at a time, each window validated in
// parallel and the summaries combined as valsort -s does.
func ValidateReader(ctx context.Context, r io.Reader, o ValidateOptions) (*Summary, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	f := o.Format
	buf := make([]byte, streamWindow)
	var acc *Summary
	have, total := 0, int64(0)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := io.ReadFull(r, buf[have:])
		have += n
		total += int64(n)
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return nil, err
		}
		whole, need, err := wholeRecords(buf[:have], f)
		if err != nil {
			return nil, err
		}
		if eof && whole < have {
			if !f.KLV {
				return nil, fmt.Errorf("%w: partial record found at end: size %d is not a multiple of the record size %d",
					ErrBadFormat, total, f.RecordSize())
			}
			return nil, fmt.Errorf("%w: truncated KLV record at offset %d: the stream ends %d bytes into it",
				ErrBadFormat, total-int64(have-whole), have-whole)
		}
		if whole > 0 {
			s, err := ValidateBytes(ctx, buf[:whole], o)
			if err != nil {
				return nil, err
			}
			s.First = append([]byte(nil), s.First...)
			s.Last = append([]byte(nil), s.Last...)
			if acc != nil {
				c := CombineSummaries([]Summary{*acc, *s}, o.CaseInsensitive, f.KeySize)
				s = &c
				s.First = acc.First
			}
			acc = s
		}
		if eof {
			break
		}
		have = copy(buf, buf[whole:have])
		if need > len(buf) { // a KLV record larger than the window
			buf = append(buf[:have], make([]byte, need-have)...)
		}
	}
	if acc == nil {
		return nil, fmt.Errorf("%w: there must be at least one record to be validated", ErrEmpty)
	}
	return acc, nil
}

// wholeRecords returns how many leading bytes of b are whole records of f
// and, for KLV, the size of the record after them (when b ends inside it).
func wholeRecords(b []byte, f record.Format) (whole, need int, err error) {
	if !f.KLV {
		rs := f.RecordSize()
		return len(b) / rs * rs, rs, nil
	}
	hdr := f.KeySize + record.KLVHeader
	off := 0
	for {
		if len(b)-off < hdr {
			return off, hdr, nil
		}
		vlen := binary.LittleEndian.Uint32(b[off+f.KeySize:])
		if vlen > record.MaxKLVValue {
			_, _, err := record.DecodeKLV(b, int64(off), f.KeySize)
			return 0, 0, err
		}
		size := hdr + int(vlen)
		if len(b)-off < size {
			return off, size, nil
		}
		off += size
	}
}
