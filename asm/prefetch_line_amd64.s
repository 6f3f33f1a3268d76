//go:build !purego

#include "textflag.h"

// The one-line PREFETCHT0 behind Prefetch (PrefetchAll and PrefetchLines
// are in prefetch_amd64.s).

// func prefetch(p unsafe.Pointer)
TEXT ·prefetch(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET
