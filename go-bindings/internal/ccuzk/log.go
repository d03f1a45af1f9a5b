package ccuzk

// This file holds the //export trampoline of cuzk_set_log_callback: cgo allows
// only declarations in the preamble of a file that exports.

/*
#include <stdint.h>
#include "cuzk.h"

extern void cuzkGoLog(void *user, uint32_t level, char *target, char *message);
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Log levels (cuzk_log_level): higher is more severe.
const (
	LogTrace = uint32(C.CUZK_LOG_TRACE)
	LogDebug = uint32(C.CUZK_LOG_DEBUG)
	LogInfo  = uint32(C.CUZK_LOG_INFO)
	LogWarn  = uint32(C.CUZK_LOG_WARN)
	LogError = uint32(C.CUZK_LOG_ERROR)
)

// LogFunc receives one library log record: its level (a Log* value), target
// (the Rust module that logged it) and message. It is called from library
// threads, several at once, and must not call the library.
type LogFunc func(level uint32, target, message string)

// logFunc is the one callback's Go side (the C side gets no user data).
var (
	logFunc atomic.Pointer[LogFunc]
	logMu   sync.Mutex
)

//export cuzkGoLog
func cuzkGoLog(_ unsafe.Pointer, level C.uint32_t, target, message *C.char) {
	if f := logFunc.Load(); f != nil {
		(*f)(uint32(level), C.GoString(target), C.GoString(message))
	}
}

// SetLogCallback is cuzk_set_log_callback with f as the callback: records at
// minLevel or more severe go to f from now on; nil sends none. Once it
// returns, the previous f is never called again.
func SetLogCallback(minLevel uint32, f LogFunc) (Status, string) {
	logMu.Lock()
	defer logMu.Unlock()
	var e C.struct_cuzk_error
	if f == nil {
		s := C.cuzk_set_log_callback(C.uint32_t(minLevel), nil, nil, &e)
		if s == C.CUZK_OK {
			logFunc.Store(nil)
		}
		return Status(s), detail(&e)
	}
	// Stored first: the trampoline may run as soon as C has it. Records that
	// reach it before the call returns already go to f.
	previous := logFunc.Swap(&f)
	s := C.cuzk_set_log_callback(C.uint32_t(minLevel), C.cuzk_log_callback(C.cuzkGoLog), nil, &e)
	if s != C.CUZK_OK {
		logFunc.Store(previous)
	}
	return Status(s), detail(&e)
}
