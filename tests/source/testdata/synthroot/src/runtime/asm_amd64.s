#include "textflag.h"

TEXT runtime·goexit(SB),NOSPLIT|TOPFRAME|NOFRAME,$0-0
	BYTE	$0x90	// NOP
	CALL	runtime·goexit1(SB)	// does not return
	BYTE	$0x90	// NOP

TEXT ·mcallish(SB), NOSPLIT, $0-8
	JMP	runtime·schedule(SB)
