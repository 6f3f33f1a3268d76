package sort

import "math/bits"

// radixSorter sorts slices of an IndexMap by key: MSD radix, one digit of
// up to 12 bits at a time — scattered out of place through a scratch
// slice when it is large enough, else permuted in place 8 bits at a time
// (American flag sort) — and insertion sort for the small sub-buckets,
// run once over the whole slice at the end (sub-buckets are already in
// order, so it only sorts within them). Comparisons look at key bits
// only: equal keys are left in any order, and a slice of equal keys costs
// one counting pass per digit.
type radixSorter struct {
	l    *layout
	wide bool
	own  []uint64 // scratch when the IndexMap has none
	cnt  []uint32 // digit counters, one block per recursion level
	tmp  [MaxKeySize/8 + 2]uint64
}

const insertionMax = 24

// digits returns a zeroed block of 1<<width counters at the bottom of the
// counter stack (growing it if needed) and the stack above it.
func digits(stack []uint32, width uint) ([]uint32, []uint32) {
	if len(stack) < 2<<12 {
		stack = make([]uint32, 8<<12)
	}
	c := stack[:1<<width]
	clear(c)
	return c, stack[1<<width:]
}

// sort sorts a (whole entries) from key bit bit on, with tmp as scratch.
func (s *radixSorter) sort(a, tmp []uint64, bit uint) {
	if s.cnt == nil {
		s.cnt = make([]uint32, 8<<12)
	}
	if s.wide {
		s.sort2(asW2(a), asW2(tmp), bit, s.cnt)
		return
	}
	s.sortN(a, tmp, bit, s.cnt)
}

// level partitions a by one digit from bit on and returns the sub-bucket
// ends (entry indices, valid until the next call) and the next key bit.
// It returns no ends when the key bits from bit on are all equal.
func (s *radixSorter) level(a, tmp []uint64, bit uint) ([]uint32, uint) {
	if s.cnt == nil {
		s.cnt = make([]uint32, 8<<12)
	}
	var ends []uint32
	var next uint
	if s.wide {
		ends, _, next = s.level2(asW2(a), asW2(tmp), bit, s.cnt)
	} else {
		ends, _, next = s.levelN(a, tmp, bit, s.cnt)
	}
	return ends, next
}

func (s *radixSorter) insertion(a []uint64) {
	if s.wide {
		insertion2(asW2(a), s.l.km[0], s.l.km[1])
		return
	}
	s.insertionN(a)
}

// digitWidth is the width of the next digit for n entries: about four
// entries per sub-bucket, at most 12 bits (8 in place), never past the
// key.
func digitWidth(n int, left uint, outOfPlace bool) uint {
	b := uint(max(1, bits.Len(uint(n))-2))
	if outOfPlace {
		b = min(b, 12)
	} else {
		b = min(b, 8)
	}
	return max(1, min(b, left))
}

func (s *radixSorter) sort2(a, tmp []w2, bit uint, stack []uint32) {
	if len(a) > insertionMax {
		ends, rest, next := s.level2(a, tmp, bit, stack)
		if ends != nil {
			lo := uint32(0)
			for _, hi := range ends {
				if hi-lo > insertionMax {
					s.sort2(a[lo:hi], tmp, next, rest)
				}
				lo = hi
			}
		}
	}
	insertion2(a, s.l.km[0], s.l.km[1])
}

func (s *radixSorter) level2(a, tmp []w2, bit uint, stack []uint32) ([]uint32, []uint32, uint) {
	n := len(a)
	kb := s.l.kb
	oop := len(tmp) >= n
	for bit < kb {
		width := digitWidth(n, kb-bit, oop)
		sh := 64 - width
		c, rest := digits(stack, width)
		for _, e := range a {
			c[top2(e, bit)>>sh]++
		}
		if int(c[top2(a[0], bit)>>sh]) == n {
			bit += width
			continue
		}
		var sum uint32
		for v, x := range c {
			c[v] = sum
			sum += x
		}
		if oop {
			t := tmp[:n]
			for _, e := range a {
				d := top2(e, bit) >> sh
				t[c[d]] = e
				c[d]++
			}
			copy(a, t)
			return c, rest, bit + width // c[v] is now the end of sub-bucket v
		}
		// American flag sort: cycle each entry into its sub-bucket.
		var ends [256]uint32
		for v := range c {
			if v+1 < len(c) {
				ends[v] = c[v+1]
			} else {
				ends[v] = uint32(n)
			}
		}
		for v := range c {
			for c[v] < ends[v] {
				x := a[c[v]]
				d := top2(x, bit) >> sh
				for d != uint64(v) {
					j := c[d]
					c[d]++
					x, a[j] = a[j], x
					d = top2(x, bit) >> sh
				}
				a[c[v]] = x
				c[v]++
			}
		}
		return c, rest, bit + width
	}
	return nil, stack, bit
}

func insertion2(a []w2, mhi, mlo uint64) {
	for i := 1; i < len(a); i++ {
		x := a[i]
		if !keyLess2(x, a[i-1], mhi, mlo) {
			continue
		}
		j := i
		for j > 0 && keyLess2(x, a[j-1], mhi, mlo) {
			a[j] = a[j-1]
			j--
		}
		a[j] = x
	}
}

// sortN, levelN and insertionN are sort2, level2 and insertion2 for
// entries of any width.
func (s *radixSorter) sortN(a, tmp []uint64, bit uint, stack []uint32) {
	w := s.l.w
	if len(a)/w > insertionMax {
		ends, rest, next := s.levelN(a, tmp, bit, stack)
		if ends != nil {
			lo := uint32(0)
			for _, hi := range ends {
				if hi-lo > insertionMax {
					s.sortN(a[int(lo)*w:int(hi)*w], tmp, next, rest)
				}
				lo = hi
			}
		}
	}
	s.insertionN(a)
}

func (s *radixSorter) levelN(a, tmp []uint64, bit uint, stack []uint32) ([]uint32, []uint32, uint) {
	l := s.l
	w := l.w
	n := len(a) / w
	kb := l.kb
	oop := len(tmp) >= len(a)
	for bit < kb {
		width := digitWidth(n, kb-bit, oop)
		sh := 64 - width
		c, rest := digits(stack, width)
		for i := 0; i < len(a); i += w {
			c[l.top(a[i:i+w], bit)>>sh]++
		}
		if int(c[l.top(a[:w], bit)>>sh]) == n {
			bit += width
			continue
		}
		var sum uint32
		for v, x := range c {
			c[v] = sum
			sum += x
		}
		if oop {
			t := tmp[:len(a)]
			for i := 0; i < len(a); i += w {
				d := l.top(a[i:i+w], bit) >> sh
				p := int(c[d]) * w
				c[d]++
				copy(t[p:p+w], a[i:i+w])
			}
			copy(a, t)
			return c, rest, bit + width
		}
		var ends [256]uint32
		for v := range c {
			if v+1 < len(c) {
				ends[v] = c[v+1]
			} else {
				ends[v] = uint32(n)
			}
		}
		x := s.tmp[:w]
		for v := range c {
			for c[v] < ends[v] {
				i := int(c[v]) * w
				d := l.top(a[i:i+w], bit) >> sh
				if d == uint64(v) {
					c[v]++
					continue
				}
				// Swap entry i into sub-bucket d's next free slot.
				j := int(c[d]) * w
				c[d]++
				copy(x, a[i:i+w])
				copy(a[i:i+w], a[j:j+w])
				copy(a[j:j+w], x)
			}
		}
		return c, rest, bit + width
	}
	return nil, stack, bit
}

func (s *radixSorter) insertionN(a []uint64) {
	l := s.l
	w := l.w
	x := s.tmp[:w]
	for i := w; i < len(a); i += w {
		if !l.keyLess(a[i:i+w], a[i-w:i]) {
			continue
		}
		copy(x, a[i:i+w])
		j := i
		for j > 0 && l.keyLess(x, a[j-w:j]) {
			j -= w
		}
		copy(a[j+w:i+w], a[j:i])
		copy(a[j:j+w], x)
	}
}
