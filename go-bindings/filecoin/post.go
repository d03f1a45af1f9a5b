package filecoin

import (
	"errors"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
)

// PartitionProof is one WindowPoSt partition's proof, as filecoin-ffi's.
type PartitionProof proof.PoStProof

// postRowOf is proofType's row, refused unless its circuit is circuit(size).
func postRowOf(proofType abi.RegisteredPoStProof, circuit func(string) cuzk.Circuit, kind string) (row, error) {
	r, err := postRow(proofType)
	if err == nil && r.circuit != circuit(r.label) {
		err = fmt.Errorf("filecoin: %s is not a %s proof", r.api, kind)
	}
	return r, err
}

// postHead is the prover id and randomness of a PoSt request.
func postHead(minerID abi.ActorID, randomness abi.PoStRandomness) (prover, seed [32]byte, err error) {
	if prover, err = proverID(minerID); err != nil {
		return
	}
	seed, err = bytes32("randomness", randomness)
	return
}

// GenerateWinningPoStWithVanilla is the default prover's
// GenerateWinningPoStWithVanilla.
func GenerateWinningPoStWithVanilla(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) {
	return Default().GenerateWinningPoStWithVanilla(proofType, minerID, randomness, proofs)
}

// GenerateWinningPoStWithVanilla proves a WinningPoSt from the challenged
// sector's vanilla proof (proofs: one, as GenerateSingleVanillaProof returned
// it), as filecoin-ffi does: one PoStProof of proofType, 192 bytes. The
// randomness is used as given (filecoin-proofs refuses one that is not a
// canonical field element: callers mask its last byte with 0x3f). It runs in
// cuzk's latency class, ahead of every other proof.
func (p *Prover) GenerateWinningPoStWithVanilla(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) {
	r, input, err := winningInput(proofType, minerID, randomness, proofs)
	if err != nil {
		return nil, err
	}
	bytes, err := p.prove(r.circuit, input, true)
	if err != nil {
		return nil, err
	}
	return []proof.PoStProof{{PoStProof: proofType, ProofBytes: bytes}}, nil
}

// winningInput is the cuzk request of a WinningPoSt call.
func winningInput(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) (row, []byte, error) {
	r, err := postRowOf(proofType, cuzk.WinningPost, "WinningPoSt")
	if err != nil {
		return r, nil, err
	}
	if len(proofs) != 1 {
		return r, nil, errors.New("invalid amount of vanilla proofs")
	}
	prover, seed, err := postHead(minerID, randomness)
	if err != nil {
		return r, nil, err
	}
	return r, cuzk.WinningPoStRequest{ProofType: r.api, Randomness: seed, ProverID: prover, VanillaProof: proofs[0]}.Input(), nil
}

// windowPoSt proves a WindowPoSt request for one partition, or every one
// (partition nil).
func (p *Prover) windowPoSt(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partition *uint64) ([]byte, error) {
	r, input, err := windowInput(proofType, minerID, randomness, proofs, partition)
	if err != nil {
		return nil, err
	}
	return p.prove(r.circuit, input, false)
}

// windowInput is the cuzk request of a WindowPoSt call.
func windowInput(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partition *uint64) (row, []byte, error) {
	r, err := postRowOf(proofType, cuzk.WindowPost, "WindowPoSt")
	if err != nil {
		return r, nil, err
	}
	prover, seed, err := postHead(minerID, randomness)
	if err != nil {
		return r, nil, err
	}
	return r, cuzk.WindowPoStRequest{ProofType: r.api, Randomness: seed, ProverID: prover, VanillaProofs: proofs, Partition: partition}.Input(), nil
}

// GenerateWindowPoStWithVanilla is the default prover's
// GenerateWindowPoStWithVanilla.
func GenerateWindowPoStWithVanilla(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) {
	return Default().GenerateWindowPoStWithVanilla(proofType, minerID, randomness, proofs)
}

// GenerateWindowPoStWithVanilla proves a WindowPoSt of every partition from
// the sectors' vanilla proofs (any order), as filecoin-ffi does: one
// PoStProof of proofType, every partition's 192 bytes in order. It goes ahead
// of every PoRep and SnapDeals proof. Unlike filecoin-ffi, a faulty sector's
// vanilla proof is an error naming it, not a list of faulty sectors.
func (p *Prover) GenerateWindowPoStWithVanilla(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) {
	bytes, err := p.windowPoSt(proofType, minerID, randomness, proofs, nil)
	if err != nil {
		return nil, err
	}
	return []proof.PoStProof{{PoStProof: proofType, ProofBytes: bytes}}, nil
}

// GenerateSinglePartitionWindowPoStWithVanilla is the default prover's
// GenerateSinglePartitionWindowPoStWithVanilla.
func GenerateSinglePartitionWindowPoStWithVanilla(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partitionIndex uint) (*PartitionProof, error) {
	return Default().GenerateSinglePartitionWindowPoStWithVanilla(proofType, minerID, randomness, proofs, partitionIndex)
}

// GenerateSinglePartitionWindowPoStWithVanilla proves partition
// partitionIndex of a WindowPoSt from its sectors' vanilla proofs, as
// filecoin-ffi does: 192 bytes, which MergeWindowPoStPartitionProofs joins
// with the other partitions'.
func (p *Prover) GenerateSinglePartitionWindowPoStWithVanilla(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partitionIndex uint) (*PartitionProof, error) {
	k := uint64(partitionIndex)
	bytes, err := p.windowPoSt(proofType, minerID, randomness, proofs, &k)
	if err != nil {
		return nil, err
	}
	return &PartitionProof{PoStProof: proofType, ProofBytes: bytes}, nil
}

// MergeWindowPoStPartitionProofs joins partition proofs, in partition order,
// into one WindowPoSt proof of proofType, as filecoin-ffi does (their bytes
// concatenated; nothing is proven or checked but the proof type).
func MergeWindowPoStPartitionProofs(proofType abi.RegisteredPoStProof, partitionProofs []PartitionProof) (*proof.PoStProof, error) {
	if _, err := postRowOf(proofType, cuzk.WindowPost, "WindowPoSt"); err != nil {
		return nil, err
	}
	var bytes []byte
	for _, pp := range partitionProofs {
		bytes = append(bytes, pp.ProofBytes...)
	}
	return &proof.PoStProof{PoStProof: proofType, ProofBytes: bytes}, nil
}
