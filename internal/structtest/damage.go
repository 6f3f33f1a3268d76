package structtest

import "fmt"

// DamageHows are the kinds of media damage a corruption campaign draws:
// the bytes zeroed, replaced by garbage, or a few bits flipped.
var DamageHows = []string{"zero", "garbage", "flip"}

// Damage is one media damage of a corruption campaign: N bytes at Off,
// How one of DamageHows.
type Damage struct {
	Off, N int
	How    string
}

func (d Damage) String() string { return fmt.Sprintf("%s of %d bytes at %d", d.How, d.N, d.Off) }

// Apply damages mem[d.Off:d.Off+d.N]: zeroes it, fills it from rng, or
// flips one to three of its bits.
func (d Damage) Apply(rng *Rand, mem []byte) {
	b := mem[d.Off : d.Off+d.N]
	switch d.How {
	case "zero":
		clear(b)
	case "garbage":
		rng.Fill(b)
	default:
		for k := 1 + rng.Intn(3); k > 0; k-- {
			b[rng.Intn(len(b))] ^= 1 << rng.Intn(8)
		}
	}
}
