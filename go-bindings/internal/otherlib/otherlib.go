//go:build linkbeside

// Package otherlib is the stand-in for filecoin-ffi's Rust library in the
// tests (tests/link-beside: a second Rust staticlib with its own Rust runtime
// and blst 0.3.14). Built only with the tag linkbeside, after
// scripts/link-beside.sh has built that library under target/link-beside.
package otherlib

/*
#cgo CFLAGS: -I${SRCDIR}/../../../tests/link-beside
#cgo LDFLAGS: -L${SRCDIR}/../../../target/link-beside/release -lother -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
#include "other.h"
*/
import "C"

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"unsafe"
)

// g1Generator is G1's generator, compressed (the BLS12-381 standard encoding).
const g1Generator = "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"

// Check runs the other library's three checks: its blst encodes G1's
// generator, signs and verifies, and its runtime catches its own panic.
func Check() error {
	var g1 [48]byte
	want, _ := hex.DecodeString(g1Generator)
	if C.other_g1_generator((*C.uint8_t)(unsafe.Pointer(&g1[0]))) != 1 || !bytes.Equal(g1[:], want) {
		return fmt.Errorf("other: G1's generator is %x", g1)
	}
	if C.other_bls_sign_verify(3) != 1 {
		return fmt.Errorf("other: a BLS signature did not verify")
	}
	if C.other_panic_caught() != 1 {
		return fmt.Errorf("other: its own panic was not caught")
	}
	return nil
}
