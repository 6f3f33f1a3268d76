//go:build !purego

#include "textflag.h"
#include "nt_amd64.h"

// func fillNTSSE2(dst unsafe.Pointer, c byte, n int)
TEXT ·fillNTSSE2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVBQZX c+8(FP), AX
	MOVQ n+16(FP), CX
	FILL_HEAD(15, head, align, vec, tail, done)

vec:
	MOVQ AX, X0
	PUNPCKLQDQ X0, X0

vecloop:
	CMPQ CX, $128
	JB vec1
	PAGE_AHEAD(nopf)
	MOVNTO X0, 0(DI)
	MOVNTO X0, 16(DI)
	MOVNTO X0, 32(DI)
	MOVNTO X0, 48(DI)
	MOVNTO X0, 64(DI)
	MOVNTO X0, 80(DI)
	MOVNTO X0, 96(DI)
	MOVNTO X0, 112(DI)
	ADDQ $128, DI
	SUBQ $128, CX
	JMP vecloop
	FILL_VEC1(16, MOVNTO, X0, vec1, words)

words:
	FILL_TAIL(wordloop, tail, done)

// func fillNTAVX2(dst unsafe.Pointer, c byte, n int)
TEXT ·fillNTAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVBQZX c+8(FP), AX
	MOVQ n+16(FP), CX
	FILL_HEAD(31, head, align, vec, tail, done)

vec:
	MOVQ AX, X0
	VPBROADCASTQ X0, Y0

vecloop:
	CMPQ CX, $256
	JB vec1
	PAGE_AHEAD(nopf)
	VMOVNTDQ Y0, 0(DI)
	VMOVNTDQ Y0, 32(DI)
	VMOVNTDQ Y0, 64(DI)
	VMOVNTDQ Y0, 96(DI)
	VMOVNTDQ Y0, 128(DI)
	VMOVNTDQ Y0, 160(DI)
	VMOVNTDQ Y0, 192(DI)
	VMOVNTDQ Y0, 224(DI)
	ADDQ $256, DI
	SUBQ $256, CX
	JMP vecloop
	FILL_VEC1(32, VMOVNTDQ, Y0, vec1, words)

words:
	VZEROUPPER
	FILL_TAIL(wordloop, tail, done)

// func fillNTAVX512(dst unsafe.Pointer, c byte, n int)
TEXT ·fillNTAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVBQZX c+8(FP), AX
	MOVQ n+16(FP), CX
	FILL_HEAD(63, head, align, vec, tail, done)

vec:
	MOVQ AX, X0
	VPBROADCASTQ X0, Z0

vecloop:
	CMPQ CX, $256
	JB vec1
	PAGE_AHEAD(nopf)
	VMOVNTDQ Z0, 0(DI)
	VMOVNTDQ Z0, 64(DI)
	VMOVNTDQ Z0, 128(DI)
	VMOVNTDQ Z0, 192(DI)
	ADDQ $256, DI
	SUBQ $256, CX
	JMP vecloop
	FILL_VEC1(64, VMOVNTDQ, Z0, vec1, words)

words:
	VZEROUPPER
	FILL_TAIL(wordloop, tail, done)
