//go:build !purego

#include "textflag.h"
#include "crc_amd64.h"

// func cpuidex(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuidex(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func flushCLWB(p unsafe.Pointer, n int)
TEXT ·flushCLWB(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done
	LEAQ (AX)(CX*1), CX
	ANDQ $-64, AX

loop:
	CLWB (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JB loop

done:
	RET

// func flushCLFLUSHOPT(p unsafe.Pointer, n int)
TEXT ·flushCLFLUSHOPT(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done
	LEAQ (AX)(CX*1), CX
	ANDQ $-64, AX

loop:
	CLFLUSHOPT (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JB loop

done:
	RET

// func flushCLFLUSH(p unsafe.Pointer, n int)
TEXT ·flushCLFLUSH(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done
	LEAQ (AX)(CX*1), CX
	ANDQ $-64, AX

loop:
	CLFLUSH (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JB loop

done:
	RET

// func persistCLWB(p unsafe.Pointer, n int)
TEXT ·persistCLWB(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE fence
	LEAQ (AX)(CX*1), CX
	ANDQ $-64, AX

loop:
	CLWB (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JB loop

fence:
	SFENCE
	RET

// func sfence()
TEXT ·sfence(SB), NOSPLIT, $0-0
	SFENCE
	RET

// func mfence()
TEXT ·mfence(SB), NOSPLIT, $0-0
	MFENCE
	RET

// func prefetch(p unsafe.Pointer)
TEXT ·prefetch(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET

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

head:
	TESTQ $7, DI
	JZ align
	MOVBQZX (SI), AX
	MOVB AX, (DI)
	INCQ SI
	INCQ DI
	DECQ CX
	JNZ head
	JMP done

align:
	TESTQ $15, DI
	JZ vec
	CMPQ CX, $8
	JB tail
	MOVQ (SI), AX
	MOVNTIQ AX, (DI)
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP align

vec:

vecloop:
	CMPQ CX, $128
	JB vec1
	// At each new destination page that the range goes past, touch
	// the next one: its page walk then overlaps this page's stores
	// (PREFETCH never faults). Not past the range: the next page is not
	// ours to touch, and on sequential copies of a page or less it was
	// a read of the line the next call then streams over.
	TESTQ $4095, DI
	JNZ nopf
	CMPQ CX, $4096
	JBE nopf
	PREFETCHT0 4096(DI)

nopf:
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

vec1:
	CMPQ CX, $16
	JB words
	MOVOU (SI), X0
	MOVNTO X0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $16, CX
	JMP vec1

words:

wordloop:
	CMPQ CX, $8
	JB tail
	MOVQ (SI), AX
	MOVNTIQ AX, (DI)
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP wordloop

tail:
	TESTQ CX, CX
	JZ done
	MOVBQZX (SI), AX
	MOVB AX, (DI)
	INCQ SI
	INCQ DI
	DECQ CX
	JMP tail

done:
	CMPB fence+24(FP), $0
	JEQ ret
	SFENCE

ret:
	RET

// func copyNTAVX2(dst, src unsafe.Pointer, n int, fence bool)
TEXT ·copyNTAVX2(SB), NOSPLIT, $0-25
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done

head:
	TESTQ $7, DI
	JZ align
	MOVBQZX (SI), AX
	MOVB AX, (DI)
	INCQ SI
	INCQ DI
	DECQ CX
	JNZ head
	JMP done

align:
	TESTQ $31, DI
	JZ vec
	CMPQ CX, $8
	JB tail
	MOVQ (SI), AX
	MOVNTIQ AX, (DI)
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP align

vec:

vecloop:
	CMPQ CX, $256
	JB vec1
	// At each new destination page that the range goes past, touch
	// the next one: its page walk then overlaps this page's stores
	// (PREFETCH never faults). Not past the range: the next page is not
	// ours to touch, and on sequential copies of a page or less it was
	// a read of the line the next call then streams over.
	TESTQ $4095, DI
	JNZ nopf
	CMPQ CX, $4096
	JBE nopf
	PREFETCHT0 4096(DI)

nopf:
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

vec1:
	CMPQ CX, $32
	JB words
	VMOVDQU (SI), Y0
	VMOVNTDQ Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP vec1

words:
	VZEROUPPER

wordloop:
	CMPQ CX, $8
	JB tail
	MOVQ (SI), AX
	MOVNTIQ AX, (DI)
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP wordloop

tail:
	TESTQ CX, CX
	JZ done
	MOVBQZX (SI), AX
	MOVB AX, (DI)
	INCQ SI
	INCQ DI
	DECQ CX
	JMP tail

done:
	CMPB fence+24(FP), $0
	JEQ ret
	SFENCE

ret:
	RET

// func copyNTAVX512(dst, src unsafe.Pointer, n int, fence bool)
TEXT ·copyNTAVX512(SB), NOSPLIT, $0-25
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done

head:
	TESTQ $7, DI
	JZ align
	MOVBQZX (SI), AX
	MOVB AX, (DI)
	INCQ SI
	INCQ DI
	DECQ CX
	JNZ head
	JMP done

align:
	TESTQ $63, DI
	JZ vec
	CMPQ CX, $8
	JB tail
	MOVQ (SI), AX
	MOVNTIQ AX, (DI)
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP align

vec:

vecloop:
	CMPQ CX, $256
	JB vec1
	// At each new destination page that the range goes past, touch
	// the next one: its page walk then overlaps this page's stores
	// (PREFETCH never faults). Not past the range: the next page is not
	// ours to touch, and on sequential copies of a page or less it was
	// a read of the line the next call then streams over.
	TESTQ $4095, DI
	JNZ nopf
	CMPQ CX, $4096
	JBE nopf
	PREFETCHT0 4096(DI)

nopf:
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

vec1:
	CMPQ CX, $64
	JB words
	VMOVDQU64 (SI), Z0
	VMOVNTDQ Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	JMP vec1

words:
	VZEROUPPER

wordloop:
	CMPQ CX, $8
	JB tail
	MOVQ (SI), AX
	MOVNTIQ AX, (DI)
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP wordloop

tail:
	TESTQ CX, CX
	JZ done
	MOVBQZX (SI), AX
	MOVB AX, (DI)
	INCQ SI
	INCQ DI
	DECQ CX
	JMP tail

done:
	CMPB fence+24(FP), $0
	JEQ ret
	SFENCE

ret:
	RET

// func fillNTSSE2(dst unsafe.Pointer, c byte, n int)
TEXT ·fillNTSSE2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVBQZX c+8(FP), AX
	MOVQ n+16(FP), CX
	MOVQ $0x0101010101010101, BX
	IMULQ BX, AX
	TESTQ CX, CX
	JLE done

head:
	TESTQ $7, DI
	JZ align
	MOVB AX, (DI)
	INCQ DI
	DECQ CX
	JNZ head
	RET

align:
	TESTQ $15, DI
	JZ vec
	CMPQ CX, $8
	JB tail
	MOVNTIQ AX, (DI)
	ADDQ $8, DI
	SUBQ $8, CX
	JMP align

vec:
	MOVQ AX, X0
	PUNPCKLQDQ X0, X0

vecloop:
	CMPQ CX, $128
	JB vec1
	// At each new destination page that the range goes past, touch
	// the next one: its page walk then overlaps this page's stores
	// (PREFETCH never faults). Not past the range: the next page is not
	// ours to touch, and on sequential copies of a page or less it was
	// a read of the line the next call then streams over.
	TESTQ $4095, DI
	JNZ nopf
	CMPQ CX, $4096
	JBE nopf
	PREFETCHT0 4096(DI)

nopf:
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

vec1:
	CMPQ CX, $16
	JB words
	MOVNTO X0, (DI)
	ADDQ $16, DI
	SUBQ $16, CX
	JMP vec1

words:

wordloop:
	CMPQ CX, $8
	JB tail
	MOVNTIQ AX, (DI)
	ADDQ $8, DI
	SUBQ $8, CX
	JMP wordloop

tail:
	TESTQ CX, CX
	JZ done
	MOVB AX, (DI)
	INCQ DI
	DECQ CX
	JMP tail

done:
	RET

// func fillNTAVX2(dst unsafe.Pointer, c byte, n int)
TEXT ·fillNTAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVBQZX c+8(FP), AX
	MOVQ n+16(FP), CX
	MOVQ $0x0101010101010101, BX
	IMULQ BX, AX
	TESTQ CX, CX
	JLE done

head:
	TESTQ $7, DI
	JZ align
	MOVB AX, (DI)
	INCQ DI
	DECQ CX
	JNZ head
	RET

align:
	TESTQ $31, DI
	JZ vec
	CMPQ CX, $8
	JB tail
	MOVNTIQ AX, (DI)
	ADDQ $8, DI
	SUBQ $8, CX
	JMP align

vec:
	MOVQ AX, X0
	VPBROADCASTQ X0, Y0

vecloop:
	CMPQ CX, $256
	JB vec1
	// At each new destination page that the range goes past, touch
	// the next one: its page walk then overlaps this page's stores
	// (PREFETCH never faults). Not past the range: the next page is not
	// ours to touch, and on sequential copies of a page or less it was
	// a read of the line the next call then streams over.
	TESTQ $4095, DI
	JNZ nopf
	CMPQ CX, $4096
	JBE nopf
	PREFETCHT0 4096(DI)

nopf:
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

vec1:
	CMPQ CX, $32
	JB words
	VMOVNTDQ Y0, (DI)
	ADDQ $32, DI
	SUBQ $32, CX
	JMP vec1

words:
	VZEROUPPER

wordloop:
	CMPQ CX, $8
	JB tail
	MOVNTIQ AX, (DI)
	ADDQ $8, DI
	SUBQ $8, CX
	JMP wordloop

tail:
	TESTQ CX, CX
	JZ done
	MOVB AX, (DI)
	INCQ DI
	DECQ CX
	JMP tail

done:
	RET

// func fillNTAVX512(dst unsafe.Pointer, c byte, n int)
TEXT ·fillNTAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVBQZX c+8(FP), AX
	MOVQ n+16(FP), CX
	MOVQ $0x0101010101010101, BX
	IMULQ BX, AX
	TESTQ CX, CX
	JLE done

head:
	TESTQ $7, DI
	JZ align
	MOVB AX, (DI)
	INCQ DI
	DECQ CX
	JNZ head
	RET

align:
	TESTQ $63, DI
	JZ vec
	CMPQ CX, $8
	JB tail
	MOVNTIQ AX, (DI)
	ADDQ $8, DI
	SUBQ $8, CX
	JMP align

vec:
	MOVQ AX, X0
	VPBROADCASTQ X0, Z0

vecloop:
	CMPQ CX, $256
	JB vec1
	// At each new destination page that the range goes past, touch
	// the next one: its page walk then overlaps this page's stores
	// (PREFETCH never faults). Not past the range: the next page is not
	// ours to touch, and on sequential copies of a page or less it was
	// a read of the line the next call then streams over.
	TESTQ $4095, DI
	JNZ nopf
	CMPQ CX, $4096
	JBE nopf
	PREFETCHT0 4096(DI)

nopf:
	VMOVNTDQ Z0, 0(DI)
	VMOVNTDQ Z0, 64(DI)
	VMOVNTDQ Z0, 128(DI)
	VMOVNTDQ Z0, 192(DI)
	ADDQ $256, DI
	SUBQ $256, CX
	JMP vecloop

vec1:
	CMPQ CX, $64
	JB words
	VMOVNTDQ Z0, (DI)
	ADDQ $64, DI
	SUBQ $64, CX
	JMP vec1

words:
	VZEROUPPER

wordloop:
	CMPQ CX, $8
	JB tail
	MOVNTIQ AX, (DI)
	ADDQ $8, DI
	SUBQ $8, CX
	JMP wordloop

tail:
	TESTQ CX, CX
	JZ done
	MOVB AX, (DI)
	INCQ DI
	DECQ CX
	JMP tail

done:
	RET

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
