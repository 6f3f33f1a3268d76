package structtest

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update-golden", false, "rewrite the golden media files (testdata/*.hex) from what the code writes now")

// Golden compares got, the bytes a structure wrote for one on-media layout
// (a header, an entry, a leaf), with the golden file testdata/name.hex of
// the calling package, and fails t at the first differing byte: a layout
// change fails the moment it is made. `go test -run X -update-golden`
// rewrites the file; commit it only with a format version change.
//
// The file is a hex dump, 16 bytes a line ("0040: 62 72 61 69 ..."), with
// '#' comment lines allowed (say what the bytes are).
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".hex")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := os.ReadFile(path)
		var comments []string
		for _, l := range strings.Split(string(old), "\n") {
			if strings.HasPrefix(l, "#") {
				comments = append(comments, l)
			}
		}
		out := strings.Join(comments, "\n")
		if out != "" {
			out += "\n"
		}
		if err := os.WriteFile(path, []byte(out+Dump(got)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (run the test with -update-golden to write it)", err)
	}
	want, err := ParseDump(string(text))
	if err != nil {
		t.Fatalf("golden file %s: %v", path, err)
	}
	if bytes.Equal(got, want) {
		return
	}
	n := min(len(got), len(want))
	i := 0
	for i < n && got[i] == want[i] {
		i++
	}
	t.Fatalf("%s: the layout changed at byte %d (%#x) of %d (golden %d bytes): got\n%swant\n%s(a format change needs a new version; then -update-golden)",
		path, i, i, len(got), len(want), Dump(window(got, i)), Dump(window(want, i)))
}

func window(b []byte, i int) []byte {
	lo := i &^ 15
	return b[lo:min(len(b), lo+32)]
}

// Dump formats b as Golden's hex dump.
func Dump(b []byte) string {
	var s strings.Builder
	for off := 0; off < len(b); off += 16 {
		fmt.Fprintf(&s, "%04x:", off)
		for _, c := range b[off:min(len(b), off+16)] {
			fmt.Fprintf(&s, " %02x", c)
		}
		s.WriteByte('\n')
	}
	return s.String()
}

// ParseDump reads Golden's hex dump back into bytes.
func ParseDump(text string) ([]byte, error) {
	var out []byte
	for n, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		off, rest, ok := strings.Cut(l, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: no offset", n+1)
		}
		var o int
		if _, err := fmt.Sscanf(off, "%x", &o); err != nil || o != len(out) {
			return nil, fmt.Errorf("line %d: offset %q, want %04x", n+1, off, len(out))
		}
		b, err := hex.DecodeString(strings.ReplaceAll(rest, " ", ""))
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		out = append(out, b...)
	}
	return out, nil
}

var updateText = flag.Bool("update", false, "rewrite the golden text files (testdata/*.golden) from what the code prints now")

// GoldenText compares got, text a command prints for people (its help, its
// usage errors, a report), with testdata/name.golden of the calling
// package, so that a change of wording shows in review as one diff of that
// file. `go test -run X -update` rewrites the file.
func GoldenText(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *updateText {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (run the test with -update to write it)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	i := 0
	for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
		i++
	}
	line := func(l []string) string {
		if i < len(l) {
			return l[i]
		}
		return "(end)"
	}
	t.Fatalf("%s: the text changed at line %d:\n got: %q\nwant: %q\n(if the change is meant, rerun with -update and review the diff)", path, i+1, line(gl), line(wl))
}
