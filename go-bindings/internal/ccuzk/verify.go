package ccuzk

/*
#include <stdbool.h>
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import "unsafe"

// SealedSector is struct cuzk_sealed_sector.
type SealedSector struct {
	CommR, CommD [32]byte
	SectorID     uint64
	Ticket, Seed [32]byte
}

// PoStSector is struct cuzk_post_sector.
type PoStSector struct {
	SectorID uint64
	CommR    [32]byte
}

// bytes32 is b as the C array a [u8; 32] pointer takes; C copies it during
// the call only.
func bytes32(b *[32]byte) *[32]C.uint8_t { return (*[32]C.uint8_t)(unsafe.Pointer(b)) }

// bytesIn is b as a C (pointer, length), (NULL, 0) when empty. The pointer is
// Go memory holding no Go pointers, valid for the call.
func bytesIn(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

func cSealed(s SealedSector) C.struct_cuzk_sealed_sector {
	var c C.struct_cuzk_sealed_sector
	c.comm_r = *bytes32(&s.CommR)
	c.comm_d = *bytes32(&s.CommD)
	c.sector_id = C.uint64_t(s.SectorID)
	c.ticket = *bytes32(&s.Ticket)
	c.seed = *bytes32(&s.Seed)
	return c
}

// verdict runs call with a C copy of registeredProof and returns its verdict.
func verdict(registeredProof string, call func(rp *C.char, valid *C.bool, e *C.struct_cuzk_error) C.cuzk_status) (bool, Status, string) {
	if s, m, bad := nulIn(registeredProof); bad {
		return false, s, m
	}
	rp := C.CString(registeredProof)
	defer C.free(unsafe.Pointer(rp))
	var valid C.bool
	var e C.struct_cuzk_error
	s := call(rp, &valid, &e)
	return bool(valid), Status(s), detail(&e)
}

// VerifySeal is cuzk_verify_seal.
func VerifySeal(registeredProof string, proverID [32]byte, sector SealedSector, proof []byte) (bool, Status, string) {
	cs := cSealed(sector)
	p, n := bytesIn(proof)
	return verdict(registeredProof, func(rp *C.char, valid *C.bool, e *C.struct_cuzk_error) C.cuzk_status {
		return C.cuzk_verify_seal(rp, bytes32(&proverID), &cs, p, n, valid, e)
	})
}

// VerifyAggregateSeals is cuzk_verify_aggregate_seals.
func VerifyAggregateSeals(registeredProof string, version uint32, proverID [32]byte, sectors []SealedSector, aggregate []byte) (bool, Status, string) {
	cs := make([]C.struct_cuzk_sealed_sector, len(sectors))
	for i, s := range sectors {
		cs[i] = cSealed(s)
	}
	var list *C.struct_cuzk_sealed_sector
	if len(cs) > 0 {
		list = &cs[0]
	}
	p, n := bytesIn(aggregate)
	return verdict(registeredProof, func(rp *C.char, valid *C.bool, e *C.struct_cuzk_error) C.cuzk_status {
		return C.cuzk_verify_aggregate_seals(rp, C.uint32_t(version), bytes32(&proverID), list, C.size_t(len(cs)), p, n, valid, e)
	})
}

// VerifyPoSt is cuzk_verify_post.
func VerifyPoSt(registeredProof string, randomness, proverID [32]byte, sectors []PoStSector, proof []byte) (bool, Status, string) {
	cs := make([]C.struct_cuzk_post_sector, len(sectors))
	for i, s := range sectors {
		cs[i].sector_id = C.uint64_t(s.SectorID)
		cs[i].comm_r = *bytes32(&s.CommR)
	}
	var list *C.struct_cuzk_post_sector
	if len(cs) > 0 {
		list = &cs[0]
	}
	p, n := bytesIn(proof)
	return verdict(registeredProof, func(rp *C.char, valid *C.bool, e *C.struct_cuzk_error) C.cuzk_status {
		return C.cuzk_verify_post(rp, bytes32(&randomness), bytes32(&proverID), list, C.size_t(len(cs)), p, n, valid, e)
	})
}

// VerifyUpdate is cuzk_verify_update.
func VerifyUpdate(registeredProof string, commROld, commRNew, commDNew [32]byte, proof []byte) (bool, Status, string) {
	p, n := bytesIn(proof)
	return verdict(registeredProof, func(rp *C.char, valid *C.bool, e *C.struct_cuzk_error) C.cuzk_status {
		return C.cuzk_verify_update(rp, bytes32(&commROld), bytes32(&commRNew), bytes32(&commDNew), p, n, valid, e)
	})
}
