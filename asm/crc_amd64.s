//go:build !purego

#include "textflag.h"
#include "crc_amd64.h"

// The CRC-32C routines (see crcTripleMin in asm_amd64.go and xPowMod in
// generic.go for the method). Registers: AX the CRC (inverted on entry
// and exit, as crc32.Update does), SI the input, CX the bytes left; in a
// round of three streams R12 the length L of each part, DI the end of the
// first part, BX and DX the CRCs of the second and third parts (preset
// 0), R8 and R9 the popcount. Loads never reach past p+n.

// func crc32cAsm(crc uint32, p unsafe.Pointer, n int) uint32
TEXT ·crc32cAsm(SB), NOSPLIT, $0-28
	MOVL crc+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	NOTL AX
	TESTQ CX, CX
	JLE done
	CMPQ CX, ·crcTripleMin(SB)
	JLT single

round:
	CRC_ROUND(last, three, single)

	// Two words per stream and iteration; parts of an odd number of
	// words begin with one word each.
	TESTQ $8, R12
	JZ loop3
	CRC32Q (SI), AX
	CRC32Q (SI)(R12*1), BX
	CRC32Q (SI)(R12*2), DX
	ADDQ $8, SI
	CMPQ SI, DI
	JAE combine3

loop3:
	CRC32Q (SI), AX
	CRC32Q (SI)(R12*1), BX
	CRC32Q (SI)(R12*2), DX
	CRC32Q 8(SI), AX
	CRC32Q 8(SI)(R12*1), BX
	CRC32Q 8(SI)(R12*2), DX
	ADDQ $16, SI
	CMPQ SI, DI
	JB loop3

combine3:
	CRC_COMBINE
	CRC_NEXT_ROUND
	JMP round

single:
	CMPQ CX, $8
	JLT tail

loop1:
	CRC32Q (SI), AX
	ADDQ $8, SI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE loop1

tail:
	TESTQ $4, CX
	JZ tail2
	CRC32L (SI), AX
	ADDQ $4, SI

tail2:
	TESTQ $2, CX
	JZ tail1
	CRC32W (SI), AX
	ADDQ $2, SI

tail1:
	TESTQ $1, CX
	JZ done
	CRC32B (SI), AX

done:
	NOTL AX
	MOVL AX, ret+24(FP)
	RET

// func popCountCRC32CAsm(crc uint32, p unsafe.Pointer, n int) (uint32, int)
//
// crc32cAsm with a POPCNT of every word it loads.
TEXT ·popCountCRC32CAsm(SB), NOSPLIT, $0-40
	MOVL crc+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	NOTL AX
	XORQ R8, R8
	XORQ R9, R9
	TESTQ CX, CX
	JLE done
	CMPQ CX, ·crcTripleMin(SB)
	JLT single

round:
	CRC_ROUND(last, three, single)

	// Parts of an odd number of words begin with one word each.
	TESTQ $8, R12
	JZ loop3
	MOVQ (SI), R10
	MOVQ (SI)(R12*1), R11
	MOVQ (SI)(R12*2), R13
	CRC32Q R10, AX
	CRC32Q R11, BX
	CRC32Q R13, DX
	POPCNTQ R10, R10
	POPCNTQ R11, R11
	POPCNTQ R13, R13
	ADDQ R10, R8
	ADDQ R11, R9
	ADDQ R13, R8
	ADDQ $8, SI
	CMPQ SI, DI
	JAE combine

loop3:
	MOVQ (SI), R10
	MOVQ (SI)(R12*1), R11
	MOVQ (SI)(R12*2), R13
	CRC32Q R10, AX
	CRC32Q R11, BX
	CRC32Q R13, DX
	POPCNTQ R10, R10
	POPCNTQ R11, R11
	POPCNTQ R13, R13
	ADDQ R10, R8
	ADDQ R11, R9
	ADDQ R13, R8
	MOVQ 8(SI), R10
	MOVQ 8(SI)(R12*1), R11
	MOVQ 8(SI)(R12*2), R13
	CRC32Q R10, AX
	CRC32Q R11, BX
	CRC32Q R13, DX
	POPCNTQ R10, R10
	POPCNTQ R11, R11
	POPCNTQ R13, R13
	ADDQ R10, R8
	ADDQ R11, R9
	ADDQ R13, R8
	ADDQ $16, SI
	CMPQ SI, DI
	JB loop3

combine:

	CRC_COMBINE
	CRC_NEXT_ROUND
	JMP round

single:
	POPCRC_SINGLE(loop1, tail, tail2, tail1, done)

done:
	NOTL AX
	ADDQ R9, R8
	MOVL AX, ret+24(FP)
	MOVQ R8, ret1+32(FP)
	RET
