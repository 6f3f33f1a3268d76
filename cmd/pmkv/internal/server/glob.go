package server

// globMatch reports whether s matches the glob pattern as Redis's KEYS,
// SCAN MATCH and the SCAN family match: * (any run), ? (any byte),
// [abc], [^abc], [a-z] (a class; ^ negates), \x (x itself).
func globMatch(p, s string) bool {
	// One backtrack point (the last star) suffices for globs, so the
	// match is linear in len(s) per star, never exponential.
	px, sx := 0, 0
	starPx, starSx := -1, -1
	for px < len(p) || sx < len(s) {
		if px < len(p) {
			switch p[px] {
			case '*':
				starPx, starSx = px, sx+1
				px++
				continue
			case '?':
				if sx < len(s) {
					px, sx = px+1, sx+1
					continue
				}
			case '[':
				if sx < len(s) {
					if ok, rest := matchClass(p[px+1:], s[sx]); ok {
						px, sx = len(p)-len(rest), sx+1
						continue
					}
				}
			default:
				q := px
				if p[q] == '\\' && q+1 < len(p) {
					q++
				}
				if sx < len(s) && p[q] == s[sx] {
					px, sx = q+1, sx+1
					continue
				}
			}
		}
		if starPx >= 0 && starSx <= len(s) {
			px, sx = starPx+1, starSx
			starSx++
			continue
		}
		return false
	}
	return true
}

// matchClass matches ch against the class that p begins (after '['),
// returning the pattern after its ']' (or its end, as Redis takes an
// unclosed class).
func matchClass(p string, ch byte) (bool, string) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	match := false
	for len(p) > 0 && p[0] != ']' {
		switch {
		case p[0] == '\\' && len(p) >= 2:
			match = match || p[1] == ch
			p = p[2:]
		case len(p) >= 3 && p[1] == '-':
			lo, hi := p[0], p[2]
			if lo > hi {
				lo, hi = hi, lo
			}
			match = match || (ch >= lo && ch <= hi)
			p = p[3:]
		default:
			match = match || p[0] == ch
			p = p[1:]
		}
	}
	if len(p) > 0 {
		p = p[1:] // the ']'
	}
	return match != not, p
}
