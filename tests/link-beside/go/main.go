// Command linkbeside links libcuzk.a (through package cuzk and pkg-config)
// and a second Rust staticlib with its own runtime and blst 0.3.14 (as a node
// links filecoin-ffi's), and calls both from several goroutines at once.
// Built and run by scripts/link-beside.sh.
//
//	linkbeside SCRATCH_DIR CUZK_VERSION
package main

/*
#cgo CFLAGS: -I${SRCDIR}/..
#cgo LDFLAGS: -L${SRCDIR}/../../../target/link-beside/release -lother -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
#include "other.h"
*/
import "C"

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
)

// G1's generator, compressed (the BLS12-381 standard encoding).
const g1Generator = "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"

// other runs the other library's three checks.
func other() error {
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

// aggregationSRS generates, writes and reads back an aggregation SRS: blst
// inside cuzk.
func aggregationSRS(path string) error {
	srs, err := cuzk.GenerateAggregationSRS(path, 2, 7)
	if err != nil {
		return err
	}
	if err := srs.Close(); err != nil {
		return err
	}
	if srs, err = cuzk.LoadAggregationSRS(path, 2); err != nil {
		return err
	}
	return srs.Close()
}

func run(dir, version string) error {
	if got := cuzk.Version(); got != version {
		return fmt.Errorf("cuzk.Version() = %q, want %q", got, version)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				errs[i] = other()
			} else {
				errs[i] = aggregationSRS(filepath.Join(dir, fmt.Sprintf("agg-%d.srs", i)))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: linkbeside SCRATCH_DIR CUZK_VERSION")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "link-beside (Go):", err)
		os.Exit(1)
	}
	fmt.Println("link-beside (Go): cuzk and the other library both work")
}
