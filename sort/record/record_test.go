package record

import (
	"errors"
	"strings"
	"testing"

	"github.com/braid-pm/braid/persist"
)

func TestFormatValidate(t *testing.T) {
	for _, tc := range []struct {
		f    Format
		ok   bool
		size int
		str  string
	}{
		{Gensort, true, 100, "fixed 10+90"},
		{Format{KeySize: 1}, true, 1, "fixed 1+0"},
		{Format{KeySize: 8, KLV: true}, true, 0, "klv key 8"},
		{Format{KeySize: 0, ValueSize: 10}, false, 10, ""},
		{Format{KeySize: MaxKeySize + 1, KLV: true}, false, 0, ""},
		{Format{KeySize: 4, ValueSize: -1}, false, 3, ""},
		{Format{KeySize: 4, ValueSize: MaxRecordSize}, false, MaxRecordSize + 4, ""},
	} {
		err := tc.f.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%+v: Validate = %v, want ok %v", tc.f, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrBadFormat) {
			t.Errorf("%+v: %v is not ErrBadFormat", tc.f, err)
		}
		if err != nil && !errors.Is(err, persist.ErrBadFormat) {
			t.Errorf("%+v: %v is not persist.ErrBadFormat", tc.f, err)
		}
		if got := tc.f.RecordSize(); got != tc.size {
			t.Errorf("%+v: RecordSize = %d, want %d", tc.f, got, tc.size)
		}
		if tc.ok && tc.f.String() != tc.str {
			t.Errorf("%+v: String = %q, want %q", tc.f, tc.f.String(), tc.str)
		}
	}
}

func TestKLV(t *testing.T) {
	var b []byte
	b = AppendKLV(b, []byte("key1"), []byte("v"))
	b = AppendKLV(b, []byte("key2"), nil)
	b = AppendKLV(b, []byte("key3"), []byte("value"))
	if len(b) != 3*(4+KLVHeader)+1+5 {
		t.Fatalf("image of %d bytes", len(b))
	}
	var got []KLVRecord
	if err := ScanKLV(b, 4, func(r KLVRecord) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []KLVRecord{{0, 1}, {9, 0}, {17, 5}}
	if len(got) != len(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("records %v, want %v", got, want)
		}
	}
	if n := got[2].Size(4); n != 13 {
		t.Errorf("size %d, want 13", n)
	}
	// Every cut short of the end is a truncated record naming its offset.
	for cut := 1; cut < len(b); cut++ {
		if cut == 9 || cut == 17 {
			continue // a record boundary
		}
		err := ScanKLV(b[:cut], 4, func(KLVRecord) error { return nil })
		if !errors.Is(err, ErrBadFormat) || !strings.Contains(err.Error(), "offset") {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
	// A value length past MaxKLVValue.
	bad := AppendKLV(nil, []byte("k"), nil)
	bad[1] = 0xff
	bad[4] = 0xff
	if _, _, err := DecodeKLV(bad, 0, 1); !errors.Is(err, ErrBadFormat) || !strings.Contains(err.Error(), "value length") {
		t.Fatalf("huge value length: %v", err)
	}
	if _, _, err := DecodeKLV(b, int64(len(b)+1), 4); !errors.Is(err, ErrBadFormat) {
		t.Fatalf("offset past the end: %v", err)
	}
}
