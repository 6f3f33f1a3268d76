package sortbench

import (
	"math/bits"
	"strconv"
)

// Uint128 is an unsigned 128-bit integer, the arithmetic of gensort's
// generator and of valsort's checksums (which are sums of CRC-32 values
// modulo 2^128).
type Uint128 struct {
	Hi, Lo uint64
}

// U128 returns v as a Uint128.
func U128(v uint64) Uint128 { return Uint128{Lo: v} }

// Add returns x + y mod 2^128.
func (x Uint128) Add(y Uint128) Uint128 {
	lo, c := bits.Add64(x.Lo, y.Lo, 0)
	hi, _ := bits.Add64(x.Hi, y.Hi, c)
	return Uint128{hi, lo}
}

// Add64 returns x + y mod 2^128.
func (x Uint128) Add64(y uint64) Uint128 {
	lo, c := bits.Add64(x.Lo, y, 0)
	return Uint128{x.Hi + c, lo}
}

// Mul returns x * y mod 2^128.
func (x Uint128) Mul(y Uint128) Uint128 {
	hi, lo := bits.Mul64(x.Lo, y.Lo)
	hi += x.Lo*y.Hi + x.Hi*y.Lo
	return Uint128{hi, lo}
}

// IsZero reports whether x == 0.
func (x Uint128) IsZero() bool { return x.Hi == 0 && x.Lo == 0 }

// Cmp compares x and y and returns -1, 0 or +1.
func (x Uint128) Cmp(y Uint128) int {
	switch {
	case x.Hi < y.Hi:
		return -1
	case x.Hi > y.Hi:
		return 1
	case x.Lo < y.Lo:
		return -1
	case x.Lo > y.Lo:
		return 1
	}
	return 0
}

// Hex formats x as gensort and valsort print checksums: lower-case hex
// without leading zeros; when the high half is not zero the low half is
// zero-padded to 16 digits.
func (x Uint128) Hex() string {
	if x.Hi == 0 {
		return strconv.FormatUint(x.Lo, 16)
	}
	lo := strconv.FormatUint(x.Lo, 16)
	pad := "0000000000000000"[:16-len(lo)]
	return strconv.FormatUint(x.Hi, 16) + pad + lo
}

// String formats x in decimal.
func (x Uint128) String() string {
	if x.Hi == 0 {
		return strconv.FormatUint(x.Lo, 10)
	}
	// Divide by 10^19 (the largest power of ten below 2^64) twice at most.
	const p19 = 10000000000000000000
	var parts []uint64
	for !x.IsZero() {
		var r uint64
		x, r = x.divmod(p19)
		parts = append(parts, r)
	}
	s := strconv.FormatUint(parts[len(parts)-1], 10)
	for i := len(parts) - 2; i >= 0; i-- {
		d := strconv.FormatUint(parts[i], 10)
		s += "0000000000000000000"[:19-len(d)] + d
	}
	return s
}

// divmod divides x by a 64-bit d.
func (x Uint128) divmod(d uint64) (Uint128, uint64) {
	qhi := x.Hi / d
	r := x.Hi % d
	qlo, r := bits.Div64(r, x.Lo, d)
	return Uint128{qhi, qlo}, r
}

// ParseUint128 parses an unsigned decimal number of up to 128 bits.
func ParseUint128(s string) (Uint128, bool) {
	if s == "" {
		return Uint128{}, false
	}
	var x Uint128
	ten := U128(10)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return Uint128{}, false
		}
		n := x.Mul(ten).Add64(uint64(c - '0'))
		// Overflow check: multiplying by 10 and adding a digit can only
		// shrink the value (mod 2^128) if it wrapped.
		if x.Hi > (^uint64(0))/10 || n.Cmp(x) < 0 {
			return Uint128{}, false
		}
		x = n
	}
	return x, true
}

// The gensort generator is the 128-bit linear congruential generator
// X' = a*X + c mod 2^128 with X_0 = 0 (rand16.c in gensort 1.5).
var (
	lcgA = Uint128{0x2360ed051fc65da4, 0x4385df649fccf645}
	lcgC = Uint128{0x4a696d4772617952, 0x4950202020202001}
)

// lcgPow holds f^(2^k) as (a_k, c_k) for k = 0..127, so that any number of
// steps can be composed from the set bits of the step count.
var lcgPow [128][2]Uint128

func init() {
	a, c := lcgA, lcgC
	for k := range lcgPow {
		lcgPow[k] = [2]Uint128{a, c}
		// f∘f(x) = a(ax+c)+c = a²x + (ac+c)
		c = a.Mul(c).Add(c)
		a = a.Mul(a)
	}
}

// lcgNext advances the generator by one step.
func lcgNext(x Uint128) Uint128 { return x.Mul(lcgA).Add(lcgC) }

// lcgSkip returns the generator state after n steps from X_0 = 0.
func lcgSkip(n Uint128) Uint128 {
	var x Uint128
	for k := 0; k < 128; k++ {
		var bit uint64
		if k < 64 {
			bit = n.Lo >> uint(k) & 1
		} else {
			bit = n.Hi >> uint(k-64) & 1
		}
		if bit != 0 {
			x = x.Mul(lcgPow[k][0]).Add(lcgPow[k][1])
		}
	}
	return x
}
