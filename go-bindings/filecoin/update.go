package filecoin

import (
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/ipfs/go-cid"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
)

// FunctionsSectorUpdate holds the SnapDeals call, as filecoin-ffi's type of
// the name: call it as SectorUpdate.GenerateUpdateProofWithVanilla.
type FunctionsSectorUpdate struct{}

// SectorUpdate is filecoin-ffi's SectorUpdate, on the default prover.
var SectorUpdate = FunctionsSectorUpdate{}

// GenerateUpdateProofWithVanilla is the default prover's
// GenerateUpdateProofWithVanilla.
func (FunctionsSectorUpdate) GenerateUpdateProofWithVanilla(proofType abi.RegisteredUpdateProof, oldSealedCID, newSealedCID, unsealedCID cid.Cid, vanillaProofs [][]byte) ([]byte, error) {
	return Default().GenerateUpdateProofWithVanilla(proofType, oldSealedCID, newSealedCID, unsealedCID, vanillaProofs)
}

// GenerateUpdateProofWithVanilla proves a SnapDeals update from every
// partition's vanilla proof (vanillaProofs, in order: what
// SectorUpdate.GenerateUpdateVanillaProofs returned), as filecoin-ffi does:
// 192 bytes per partition (1 at 2 KiB, 4 at 8 MiB, 16 from 512 MiB).
func (p *Prover) GenerateUpdateProofWithVanilla(proofType abi.RegisteredUpdateProof, oldSealedCID, newSealedCID, unsealedCID cid.Cid, vanillaProofs [][]byte) ([]byte, error) {
	r, input, err := updateInput(proofType, oldSealedCID, newSealedCID, unsealedCID, vanillaProofs)
	if err != nil {
		return nil, err
	}
	return p.prove(r.circuit, input, false)
}

// updateInput is the cuzk request of a SnapDeals call.
func updateInput(proofType abi.RegisteredUpdateProof, oldSealedCID, newSealedCID, unsealedCID cid.Cid, vanillaProofs [][]byte) (row, []byte, error) {
	r, err := updateRow(proofType)
	if err != nil {
		return r, nil, err
	}
	req := cuzk.SnapDealsRequest{ProofType: r.api, PartitionProofs: vanillaProofs}
	if req.CommROld, err = commR(oldSealedCID); err != nil {
		return r, nil, fmt.Errorf("transforming old CommR: %w", err)
	}
	if req.CommRNew, err = commR(newSealedCID); err != nil {
		return r, nil, fmt.Errorf("transforming new CommR: %w", err)
	}
	if req.CommDNew, err = commD(unsealedCID); err != nil {
		return r, nil, fmt.Errorf("transforming new CommD: %w", err)
	}
	return r, req.Input(), nil
}
