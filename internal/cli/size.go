package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/braid-pm/braid/persist"
)

// Size is a flag.Value of bytes: 4096, 64K, 64KiB, 512MiB, 2GiB, 1.5G
// (powers of 1024; "B", "iB" optional, any case).
type Size int64

// String prints the size in the largest binary unit that divides it
// ("1 GiB", "4 KiB", "100 B").
func (s *Size) String() string { return FormatSize(int64(*s)) }

// Type is the value's name in a flag's help (pflag.Value).
func (s *Size) Type() string { return "size" }

func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}

// errSize is the error of a size that does not parse. It does not repeat
// the value: the flag package quotes it.
var errSize = errors.New("bad size: want a number of bytes with an optional K, M, G or T suffix (e.g. 4096, 64KiB, 512MiB, 1.5GiB)")

// sizeRE is a size: a decimal number, then an optional unit (K, M, G, T,
// each optionally followed by iB or B; or B alone), any case.
var sizeRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?|\.[0-9]+) *(?:([KMGT])(?:I?B)?|B)?$`)

// ParseSize parses a size as Size does: a decimal number (a fraction only
// where it makes whole bytes: 1.5G, not 1.5) with an optional unit. A size
// of 2^62 bytes or more is "too large".
func ParseSize(v string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(v)))
	if m == nil {
		return 0, errSize
	}
	shift := 0
	if m[2] != "" {
		shift = 10 * (1 + strings.Index("KMGT", m[2]))
	}
	if !strings.Contains(m[1], ".") {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || n >= (1<<62)>>shift {
			return 0, errors.New("size too large: at most 2^62 bytes")
		}
		return n << shift, nil
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, errSize
	}
	b := f * float64(int64(1)<<shift)
	if b >= 1<<62 {
		return 0, errors.New("size too large: at most 2^62 bytes")
	}
	if b != float64(int64(b)) {
		return 0, errors.New("bad size: not a whole number of bytes (a fraction needs a unit: 1.5G)")
	}
	return int64(b), nil
}

// FormatSize prints n in the largest binary unit that divides it
// (persist.FormatSize).
func FormatSize(n int64) string { return persist.FormatSize(n) }

// HumanBytes prints n rounded in its largest binary unit ("1.50 GiB",
// "64.0 MiB", "12 B").
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
