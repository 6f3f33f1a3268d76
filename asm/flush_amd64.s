//go:build !purego

#include "textflag.h"

// FLUSH_LINES(INSN, loop, done) writes back every cache line of the n bytes at
// p with INSN (CLWB, CLFLUSHOPT or CLFLUSH): from the line holding p to
// the one holding p+n-1; n <= 0 jumps to done.
#define FLUSH_LINES(INSN, loop, done) \
	MOVQ p+0(FP), AX; \
	MOVQ n+8(FP), CX; \
	TESTQ CX, CX; \
	JLE done; \
	LEAQ (AX)(CX*1), CX; \
	ANDQ $-64, AX; \
loop: \
	INSN (AX); \
	ADDQ $64, AX; \
	CMPQ AX, CX; \
	JB loop

// func flushCLWB(p unsafe.Pointer, n int)
TEXT ·flushCLWB(SB), NOSPLIT, $0-16
	FLUSH_LINES(CLWB, loop, done)

done:
	RET

// func flushCLFLUSHOPT(p unsafe.Pointer, n int)
TEXT ·flushCLFLUSHOPT(SB), NOSPLIT, $0-16
	FLUSH_LINES(CLFLUSHOPT, loop, done)

done:
	RET

// func flushCLFLUSH(p unsafe.Pointer, n int)
TEXT ·flushCLFLUSH(SB), NOSPLIT, $0-16
	FLUSH_LINES(CLFLUSH, loop, done)

done:
	RET

// func persistCLWB(p unsafe.Pointer, n int)
TEXT ·persistCLWB(SB), NOSPLIT, $0-16
	FLUSH_LINES(CLWB, loop, fence)

fence:
	SFENCE
	RET
