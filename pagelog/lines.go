package pagelog

import "math/bits"

// Lines is a dirty-line mask for WriteLines: bit i%64 of word i/64 marks
// the 64-byte line i of a page. A buffer manager keeps one per frame.
type Lines []uint64

// NewLines returns an empty mask for pages of pageSize bytes (an empty
// mask for a size below one line).
func NewLines(pageSize int) Lines { return make(Lines, (max(pageSize, 0)/lineSize+63)/64) }

// lines is the number of lines the mask can mark.
func (l Lines) lines() int { return len(l) * 64 }

// Set marks line i. A line the mask does not cover (i < 0 or beyond the
// mask) is ignored: there is no such line to write.
func (l Lines) Set(i int) {
	if i >= 0 && i < l.lines() {
		l[i/64] |= 1 << (i % 64)
	}
}

// Has reports whether line i is marked (false for a line the mask does not
// cover).
func (l Lines) Has(i int) bool {
	return i >= 0 && i < l.lines() && l[i/64]&(1<<(i%64)) != 0
}

// Mark marks the lines that hold bytes [off, off+n) of the page, clipped
// to the lines the mask covers (nothing for n <= 0).
func (l Lines) Mark(off, n int) {
	if n <= 0 || off >= l.lines()*lineSize || off+n <= 0 || off+n < off {
		return
	}
	first := max(off, 0) / lineSize
	last := min((off+n-1)/lineSize, l.lines()-1)
	for i := first; i <= last; i++ {
		l.Set(i)
	}
}

// Count returns the number of marked lines.
func (l Lines) Count() int {
	n := 0
	for _, w := range l {
		n += bits.OnesCount64(w)
	}
	return n
}

// Reset clears the mask.
func (l Lines) Reset() { clear(l) }
