//go:build !purego

#include "textflag.h"

// func prefetchAll(ps unsafe.Pointer, n int)
//
// PREFETCHT0 of each of the n pointers at ps. A prefetch never faults, so
// the addresses are not checked.
TEXT ·prefetchAll(SB), NOSPLIT, $0-16
	MOVQ ps+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done

loop:
	MOVQ (AX), DX
	PREFETCHT0 (DX)
	ADDQ $8, AX
	DECQ CX
	JNZ loop

done:
	RET

// func prefetchLines(p unsafe.Pointer, n int)
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done
	LEAQ (AX)(CX*1), CX
	ANDQ $-64, AX

loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JB loop

done:
	RET
