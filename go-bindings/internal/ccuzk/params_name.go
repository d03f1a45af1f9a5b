package ccuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import "unsafe"

// paramsNameCap holds every production name (about 150 bytes) on the first
// try.
const paramsNameCap = 256

// ParamsFileName is cuzk_params_file_name: the name without its NUL.
func ParamsFileName(c Circuit) (string, Status, string) {
	if s, m, bad := nulIn(c.Name); bad {
		return "", s, m
	}
	circuit, free := cCircuit(c)
	defer free()
	buf := make([]byte, paramsNameCap)
	for {
		var n C.size_t
		var e C.struct_cuzk_error
		s := C.cuzk_params_file_name(&circuit, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n, &e)
		if Status(s) == Status(C.CUZK_BUFFER_TOO_SMALL) && int(n) > len(buf) {
			buf = make([]byte, int(n))
			continue
		}
		if Status(s) != StatusOK || n == 0 {
			return "", Status(s), detail(&e)
		}
		return string(buf[:n-1]), Status(s), ""
	}
}
