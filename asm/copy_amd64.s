//go:build !purego

#include "textflag.h"
#include "nt_amd64.h"

// func streamCopy(dst, src unsafe.Pointer, n int, fence bool)
//
// The dispatcher of the streaming copy: a tail jump to the widest
// variant, which takes the same arguments and has no frame of its own.
// A Go caller pays one call; with fence, the variant ends with SFENCE.
// Every ordinary store between two fences costs here — the stores queued
// behind an SFENCE commit one by one when it completes — so the durable
// copy is not a nested call (return address, frame pointer and three
// arguments stored again).
TEXT ·streamCopy(SB), NOSPLIT, $0-25
	CMPB ·useAVX512(SB), $0
	JNE avx512
	CMPB ·useAVX2(SB), $0
	JNE avx2
	JMP ·copyNTSSE2(SB)

avx512:
	JMP ·copyNTAVX512(SB)

avx2:
	JMP ·copyNTAVX2(SB)

// func copyNTSSE2(dst, src unsafe.Pointer, n int, fence bool)
TEXT ·copyNTSSE2(SB), NOSPLIT, $0-25
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done
	COPY_HEAD(15, head, align, vec, tail, done)

vec:
vecloop:
	CMPQ CX, $128
	JB vec1
	PAGE_AHEAD(nopf)
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVOU 64(SI), X4
	MOVOU 80(SI), X5
	MOVOU 96(SI), X6
	MOVOU 112(SI), X7
	MOVNTO X0, 0(DI)
	MOVNTO X1, 16(DI)
	MOVNTO X2, 32(DI)
	MOVNTO X3, 48(DI)
	MOVNTO X4, 64(DI)
	MOVNTO X5, 80(DI)
	MOVNTO X6, 96(DI)
	MOVNTO X7, 112(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $128, CX
	JMP vecloop
	COPY_VEC1(16, MOVOU, MOVNTO, X0, vec1, words)

words:
	COPY_TAIL(wordloop, tail, done, ret)

// func copyNTAVX2(dst, src unsafe.Pointer, n int, fence bool)
TEXT ·copyNTAVX2(SB), NOSPLIT, $0-25
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done
	COPY_HEAD(31, head, align, vec, tail, done)

vec:
vecloop:
	CMPQ CX, $256
	JB vec1
	PAGE_AHEAD(nopf)
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VMOVDQU 128(SI), Y4
	VMOVDQU 160(SI), Y5
	VMOVDQU 192(SI), Y6
	VMOVDQU 224(SI), Y7
	VMOVNTDQ Y0, 0(DI)
	VMOVNTDQ Y1, 32(DI)
	VMOVNTDQ Y2, 64(DI)
	VMOVNTDQ Y3, 96(DI)
	VMOVNTDQ Y4, 128(DI)
	VMOVNTDQ Y5, 160(DI)
	VMOVNTDQ Y6, 192(DI)
	VMOVNTDQ Y7, 224(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $256, CX
	JMP vecloop
	COPY_VEC1(32, VMOVDQU, VMOVNTDQ, Y0, vec1, words)

words:
	VZEROUPPER
	COPY_TAIL(wordloop, tail, done, ret)

// func copyNTAVX512(dst, src unsafe.Pointer, n int, fence bool)
TEXT ·copyNTAVX512(SB), NOSPLIT, $0-25
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done
	COPY_HEAD(63, head, align, vec, tail, done)

vec:
vecloop:
	CMPQ CX, $256
	JB vec1
	PAGE_AHEAD(nopf)
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVNTDQ Z0, 0(DI)
	VMOVNTDQ Z1, 64(DI)
	VMOVNTDQ Z2, 128(DI)
	VMOVNTDQ Z3, 192(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $256, CX
	JMP vecloop
	COPY_VEC1(64, VMOVDQU64, VMOVNTDQ, Z0, vec1, words)

words:
	VZEROUPPER
	COPY_TAIL(wordloop, tail, done, ret)
