//go:build !purego

#include "textflag.h"
#include "crc_amd64.h"

// The bit count of each nibble value, for VPSHUFB, and the low-nibble mask.
DATA popNibbles<>+0(SB)/8, $0x0302020102010100
DATA popNibbles<>+8(SB)/8, $0x0403030203020201
DATA popNibbles<>+16(SB)/8, $0x0302020102010100
DATA popNibbles<>+24(SB)/8, $0x0403030203020201
GLOBL popNibbles<>(SB), RODATA|NOPTR, $32

DATA lowNibbles<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowNibbles<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowNibbles<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowNibbles<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL lowNibbles<>(SB), RODATA|NOPTR, $32

// Replaces each byte of Y by its number of set bits (at most 8). T is
// scratch.
#define NIBBLE_COUNT(Y, T) \
	VPSRLW $4, Y, T; \
	VPAND Y15, Y, Y; \
	VPAND Y15, T, T; \
	VPSHUFB Y, Y14, Y; \
	VPSHUFB T, Y14, T; \
	VPADDB T, Y, Y

// func popCountCRC32CAVX2(crc uint32, p unsafe.Pointer, n int) (uint32, int)
//
// popCountCRC32CAsm with the bits of the three-stream rounds counted by
// AVX2 beside the CRC32Q chains, 32 bytes per stream per iteration: the
// count runs on the vector units (VPSHUFB of nibbles, VPSADBW into four
// 64-bit sums in Y12) while the CRC keeps the integer ones busy. The
// single stream is popCountCRC32CAsm's (POPCRC_SINGLE).
TEXT ·popCountCRC32CAVX2(SB), NOSPLIT, $0-40
	MOVL crc+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	NOTL AX
	XORQ R8, R8
	XORQ R9, R9
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	VMOVDQU popNibbles<>(SB), Y14
	VMOVDQU lowNibbles<>(SB), Y15
	TESTQ CX, CX
	JLE done
	CMPQ CX, ·crcTripleMin(SB)
	JLT single

round:
	CRC_ROUND(last, three, single)

	// Parts whose length is not a multiple of 32 bytes begin with one to
	// three words each, counted by POPCNT.
	MOVQ R12, R11
	ANDQ $24, R11
	JZ loopv
	ADDQ SI, R11

pre:
	CRC32Q (SI), AX
	CRC32Q (SI)(R12*1), BX
	CRC32Q (SI)(R12*2), DX
	POPCNTQ (SI), R10
	ADDQ R10, R8
	POPCNTQ (SI)(R12*1), R10
	ADDQ R10, R9
	POPCNTQ (SI)(R12*2), R10
	ADDQ R10, R8
	ADDQ $8, SI
	CMPQ SI, R11
	JB pre
	CMPQ SI, DI
	JAE combine

loopv:
	VMOVDQU (SI), Y0
	VMOVDQU (SI)(R12*1), Y1
	VMOVDQU (SI)(R12*2), Y2
	CRC32Q (SI), AX
	CRC32Q (SI)(R12*1), BX
	CRC32Q (SI)(R12*2), DX
	NIBBLE_COUNT(Y0, Y3)
	CRC32Q 8(SI), AX
	CRC32Q 8(SI)(R12*1), BX
	CRC32Q 8(SI)(R12*2), DX
	NIBBLE_COUNT(Y1, Y4)
	CRC32Q 16(SI), AX
	CRC32Q 16(SI)(R12*1), BX
	CRC32Q 16(SI)(R12*2), DX
	NIBBLE_COUNT(Y2, Y5)
	CRC32Q 24(SI), AX
	CRC32Q 24(SI)(R12*1), BX
	CRC32Q 24(SI)(R12*2), DX
	VPADDB Y1, Y0, Y0
	VPADDB Y2, Y0, Y0
	VPSADBW Y13, Y0, Y0
	VPADDQ Y0, Y12, Y12
	ADDQ $32, SI
	CMPQ SI, DI
	JB loopv

combine:
	// CRC_COMBINE in VEX encoding (the upper halves of the Y registers
	// are live: legacy SSE would pay a transition on some CPUs).
	LEAQ ·crcShift(SB), R10
	VMOVQ AX, X0
	VMOVQ 0(R10)(R12*2), X1
	VPCLMULQDQ $0x00, X1, X0, X0
	VMOVQ BX, X2
	VMOVQ 8(R10)(R12*2), X3
	VPCLMULQDQ $0x00, X3, X2, X2
	VPXOR X2, X0, X0
	VMOVQ X0, R10
	XORL AX, AX
	CRC32Q R10, AX
	XORL DX, AX
	CRC_NEXT_ROUND
	JMP round

single:
	POPCRC_SINGLE(loop1, tail, tail2, tail1, done)

done:
	// The four sums of Y12 into R8.
	VEXTRACTI128 $1, Y12, X0
	VPADDQ X0, X12, X0
	VPSHUFD $0x4e, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, R10
	ADDQ R10, R8
	VZEROUPPER
	NOTL AX
	ADDQ R9, R8
	MOVL AX, ret+24(FP)
	MOVQ R8, ret1+32(FP)
	RET
