//go:build !purego

package asm

// archCopies lists every instruction-set variant this CPU can run, so each
// is tested whatever the dispatcher would pick.
func archCopies() map[string]copyFunc {
	m := map[string]copyFunc{"SSE2": copyNTSSE2}
	if HasAVX2 {
		m["AVX2"] = copyNTAVX2
	}
	if HasAVX512 {
		m["AVX512"] = copyNTAVX512
	}
	return m
}

func archFills() map[string]fillFunc {
	m := map[string]fillFunc{"SSE2": fillNTSSE2}
	if HasAVX2 {
		m["AVX2"] = fillNTAVX2
	}
	if HasAVX512 {
		m["AVX512"] = fillNTAVX512
	}
	return m
}
