// Shared by the CRC-32C routines of asm_amd64.s and crcpop_avx2_amd64.s.

// CRC_BLOCK is the longest part of a three-stream round (crcBlock in Go).
#define CRC_BLOCK 1024

// CRC_ROUND starts a three-stream round over the CX bytes at SI (the
// caller's label for the round is just before it): parts of R12 =
// CRC_BLOCK bytes while 3*CRC_BLOCK remain, else the last round's
// CRC_PART_LEN, or a jump to single when fewer than crcTripleMin (or 24)
// bytes remain; DI = the end of the first part, BX = DX = 0 (the second
// and third streams).
#define CRC_ROUND(last, three, single) \
	CMPQ CX, $(3*CRC_BLOCK); \
	JLT last; \
	MOVQ $CRC_BLOCK, R12; \
	JMP three; \
last: \
	CMPQ CX, ·crcTripleMin(SB); \
	JLT single; \
	CMPQ CX, $24; \
	JLT single; \
	CRC_PART_LEN; \
three: \
	LEAQ (SI)(R12*1), DI; \
	XORL BX, BX; \
	XORL DX, DX

// CRC_PART_LEN sets R12 to the part length of the last round over CX
// bytes (CX < 3*CRC_BLOCK): L = 8*floor(CX/24). CX*2731/65536 errs by less
// than 1/64 above CX/24, whose fraction is at most 23/24.
#define CRC_PART_LEN \
	IMUL3Q $2731, CX, R12; \
	SHRQ $13, R12; \
	ANDQ $-8, R12

// CRC_COMBINE folds the three streams' CRCs of a round with parts of R12
// bytes (AX, BX, DX; legacy SSE encoding):
// AX = CRC32Q(0, clmul(AX, x^(16L-33)) ^ clmul(BX, x^(8L-33))) ^ DX.
// Clobbers R10 and X0-X3.
#define CRC_COMBINE \
	LEAQ ·crcShift(SB), R10; \
	MOVQ AX, X0; \
	MOVQ 0(R10)(R12*2), X1; \
	PCLMULQDQ $0x00, X1, X0; \
	MOVQ BX, X2; \
	MOVQ 8(R10)(R12*2), X3; \
	PCLMULQDQ $0x00, X3, X2; \
	PXOR X2, X0; \
	MOVQ X0, R10; \
	XORL AX, AX; \
	CRC32Q R10, AX; \
	XORL DX, AX

// CRC_NEXT_ROUND moves SI past the round's three parts and takes them
// from CX.
#define CRC_NEXT_ROUND \
	LEAQ (SI)(R12*2), SI; \
	LEAQ (R12)(R12*2), R12; \
	SUBQ R12, CX

// POPCRC_SINGLE continues the CRC (AX) and bit count (R8) over the CX
// bytes at SI with one stream: words, then 4, 2 and 1 bytes; then jumps
// to end. The labels are the caller's names for its loop and steps.
// Clobbers R10.
#define POPCRC_SINGLE(loop, t4, t2, t1, end) \
	CMPQ CX, $8; \
	JLT t4; \
loop: \
	MOVQ (SI), R10; \
	CRC32Q R10, AX; \
	POPCNTQ R10, R10; \
	ADDQ R10, R8; \
	ADDQ $8, SI; \
	SUBQ $8, CX; \
	CMPQ CX, $8; \
	JGE loop; \
t4: \
	TESTQ $4, CX; \
	JZ t2; \
	MOVL (SI), R10; \
	CRC32L R10, AX; \
	POPCNTL R10, R10; \
	ADDQ R10, R8; \
	ADDQ $4, SI; \
t2: \
	TESTQ $2, CX; \
	JZ t1; \
	MOVWQZX (SI), R10; \
	CRC32W R10, AX; \
	POPCNTL R10, R10; \
	ADDQ R10, R8; \
	ADDQ $2, SI; \
t1: \
	TESTQ $1, CX; \
	JZ end; \
	MOVBQZX (SI), R10; \
	CRC32B R10, AX; \
	POPCNTL R10, R10; \
	ADDQ R10, R8; \
	JMP end
