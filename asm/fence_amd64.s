//go:build !purego

#include "textflag.h"

// func sfence()
TEXT ·sfence(SB), NOSPLIT, $0-0
	SFENCE
	RET

// func mfence()
TEXT ·mfence(SB), NOSPLIT, $0-0
	MFENCE
	RET
