package crash

// A covering array of strength t over n binary columns: rows such that for
// every t columns every one of the 2^t combinations of their values is in
// some row. Column j is unit j; a 1 in a row means the unit survived in
// that image, a 0 that it was lost.
type coverArray struct {
	n    int
	rows [][]uint64 // bit j of a row is column j
}

func (a *coverArray) bit(r, j int) bool { return a.rows[r][j>>6]&(1<<(uint(j)&63)) != 0 }

func newRows(nrows, n int) [][]uint64 {
	rows := make([][]uint64, nrows)
	for i := range rows {
		rows[i] = make([]uint64, (n+63)/64)
	}
	return rows
}

func setBit(row []uint64, j int) { row[j>>6] |= 1 << (uint(j) & 63) }

// binomial is C(n, k), saturated at 2^30 (n stays small: under 64).
func binomial(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	c := uint64(1)
	for i := 0; i < k; i++ {
		c = c * uint64(n-i) / uint64(i+1)
		if c > 1<<30 {
			return 1 << 30
		}
	}
	return int(c)
}

// cover2 is a strength-2 covering array of n columns in the fewest rows N
// that exist (Kleitman and Spencer; Katona): row 0 is all zeros, and the
// columns are distinct N-bit words of weight ceil(N/2) over rows 1..N-1.
// Two distinct columns of equal weight each have a 1 where the other has a
// 0, and two sets of ceil(N/2) of N-1 rows share a row: all four
// combinations. N is the least with C(N-1, ceil(N/2)) >= n: 6 rows for 10
// columns, 9 for 56, 12 for 462, 14 for 1716.
func cover2(n int) *coverArray {
	if n <= 1 {
		rows := newRows(2, n)
		if n == 1 {
			setBit(rows[1], 0)
		}
		return &coverArray{n: n, rows: rows}
	}
	N := 3
	for binomial(N-1, (N+1)/2) < n {
		N++
	}
	w := (N + 1) / 2
	rows := newRows(N, n)
	// The first n w-subsets of {1..N-1} in lexicographic order.
	set := make([]int, w)
	for i := range set {
		set[i] = i + 1
	}
	for j := 0; j < n; j++ {
		for _, r := range set {
			setBit(rows[r], j)
		}
		// next subset
		i := w - 1
		for i >= 0 && set[i] == N-w+i {
			i--
		}
		if i < 0 {
			break // cannot happen: C(N-1, w) >= n
		}
		set[i]++
		for k := i + 1; k < w; k++ {
			set[k] = set[k-1] + 1
		}
	}
	return &coverArray{n: n, rows: rows}
}

// cover3 is a strength-3 covering array of n columns by Roux's doubling:
// from A, of strength 3 over m columns, and B, of strength 2 over m, the
// rows [A A] and [B ~B] have strength 3 over 2m columns (a triple inside
// one half is covered by A; one with a column and its copy, by A where
// the two agree and by [B ~B] where they differ; any other, by A). The
// base is the 8 even-weight words over 4 columns. 8 rows up to 4
// columns, 81 for 1024.
func cover3(n int) *coverArray {
	if n <= 4 {
		rows := newRows(8, n)
		for r := 0; r < 8; r++ {
			bitsOf := [4]bool{r&1 != 0, r&2 != 0, r&4 != 0, (r&1 ^ r>>1&1 ^ r>>2&1) != 0}
			for j := 0; j < n; j++ {
				if bitsOf[j] {
					setBit(rows[r], j)
				}
			}
		}
		return &coverArray{n: n, rows: rows}
	}
	m := (n + 1) / 2
	a, b := cover3(m), cover2(m)
	rows := newRows(len(a.rows)+len(b.rows), n)
	for r := range a.rows {
		for j := 0; j < m; j++ {
			if a.bit(r, j) {
				setBit(rows[r], j)
				if m+j < n {
					setBit(rows[r], m+j)
				}
			}
		}
	}
	for r := range b.rows {
		row := rows[len(a.rows)+r]
		for j := 0; j < m; j++ {
			if b.bit(r, j) {
				setBit(row, j)
			} else if m+j < n {
				setBit(row, m+j)
			}
		}
	}
	return &coverArray{n: n, rows: rows}
}

// coverRows is the number of rows of the covering array of strength t over
// n columns (0 for t < 2).
func coverRows(t, n int) int {
	switch {
	case t < 2 || n == 0:
		return 0
	case t == 2:
		if n <= 1 {
			return 2
		}
		N := 3
		for binomial(N-1, (N+1)/2) < n {
			N++
		}
		return N
	}
	if n <= 4 {
		return 8
	}
	m := (n + 1) / 2
	return coverRows(3, m) + coverRows(2, m)
}

func newCover(t, n int) *coverArray {
	switch {
	case t < 2 || n == 0:
		return nil
	case t == 2:
		return cover2(n)
	}
	return cover3(n)
}
