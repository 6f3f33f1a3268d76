//go:build !purego

#include "textflag.h"

// func popcntAsm(p unsafe.Pointer, n int) int
TEXT ·popcntAsm(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	XORQ AX, AX
	XORQ BX, BX
	XORQ DX, DX
	XORQ R8, R8

loop32:
	CMPQ CX, $32
	JLT loop8
	POPCNTQ (SI), R9
	POPCNTQ 8(SI), R10
	POPCNTQ 16(SI), R11
	POPCNTQ 24(SI), R12
	ADDQ R9, AX
	ADDQ R10, BX
	ADDQ R11, DX
	ADDQ R12, R8
	ADDQ $32, SI
	SUBQ $32, CX
	JMP loop32

loop8:
	CMPQ CX, $8
	JLT tail
	POPCNTQ (SI), R9
	ADDQ R9, AX
	ADDQ $8, SI
	SUBQ $8, CX
	JMP loop8

tail:
	TESTQ CX, CX
	JLE done
	MOVBQZX (SI), R9
	POPCNTQ R9, R9
	ADDQ R9, AX
	INCQ SI
	DECQ CX
	JMP tail

done:
	ADDQ BX, AX
	ADDQ DX, AX
	ADDQ R8, AX
	MOVQ AX, ret+16(FP)
	RET

