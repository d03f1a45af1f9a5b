package filecoin

import (
	"errors"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
)

// The verification calls are filecoin-ffi's, backed by filecoin-proofs' own
// verifiers. Like filecoin-ffi they read the verifying keys (and the
// aggregation SRS) from FIL_PROOFS_PARAMETER_CACHE (default
// /var/tmp/filecoin-proof-parameters), read once per process, not from a
// Prover's ParamsDir: each circuit's ".vk" file beside its ".params" file
// (cuzk.ParamsFileName), derived from that ".params" file (and written) when
// absent. A proof that does not verify is (false, nil); an input
// filecoin-proofs refuses is an error. The V1 seal proofs, not proven by cuzk,
// are verified.

// verdict turns a library verdict into filecoin-ffi's (bool, error).
func verdict(op string, valid bool, s ccuzk.Status, msg string) (bool, error) {
	if s != ccuzk.StatusOK {
		return false, &cuzk.Error{Status: cuzk.Status(s), Op: op, Message: msg}
	}
	return valid, nil
}

// sealAPI is p's name in filecoin-proofs-api, the V1 seal proofs included.
func sealAPI(p abi.RegisteredSealProof) (string, error) {
	if r, ok := seals[p]; ok {
		return r.api, nil
	}
	return "", fmt.Errorf("%w: unknown abi.RegisteredSealProof %d", ErrUnsupportedProof, int64(p))
}

// sealedSector is a seal's sector for the verifier.
func sealedSector(number abi.SectorNumber, sealed, unsealed cid.Cid, ticket, seed []byte) (ccuzk.SealedSector, error) {
	s := ccuzk.SealedSector{SectorID: uint64(number)}
	var err error
	if s.CommR, err = commR(sealed); err != nil {
		return s, err
	}
	if s.CommD, err = commD(unsealed); err != nil {
		return s, err
	}
	if s.Ticket, err = bytes32("Randomness", ticket); err != nil {
		return s, err
	}
	s.Seed, err = bytes32("InteractiveRandomness", seed)
	return s, err
}

// VerifySeal verifies a sector's seal proof (info.Proof: what
// SealCommitPhase2 returned) as filecoin-ffi's VerifySeal does, with
// filecoin-proofs' verify_seal.
func VerifySeal(info proof.SealVerifyInfo) (bool, error) {
	api, err := sealAPI(info.SealProof)
	if err != nil {
		return false, err
	}
	s, err := sealedSector(info.Number, info.SealedCID, info.UnsealedCID, info.Randomness, info.InteractiveRandomness)
	if err != nil {
		return false, err
	}
	prover, err := proverID(info.Miner)
	if err != nil {
		return false, err
	}
	valid, st, msg := ccuzk.VerifySeal(api, prover, s, info.Proof)
	return verdict("cuzk_verify_seal", valid, st, msg)
}

// VerifyAggregateSeals verifies a SnarkPack aggregate of seal proofs (what
// AggregateSealProofs, or SealCommitPhase2 for one NiPoRep sector, returned)
// as filecoin-ffi's VerifyAggregateSeals does, with filecoin-proofs'
// verify_aggregate_seal_commit_proofs.
func VerifyAggregateSeals(aggregate proof.AggregateSealVerifyProofAndInfos) (bool, error) {
	if len(aggregate.Infos) == 0 {
		return false, errors.New("no seal verify infos")
	}
	api, err := sealAPI(aggregate.SealProof)
	if err != nil {
		return false, err
	}
	version, err := snarkPackVersion(aggregate.AggregateProof)
	if err != nil {
		return false, err
	}
	sectors := make([]ccuzk.SealedSector, len(aggregate.Infos))
	for i, info := range aggregate.Infos {
		if sectors[i], err = sealedSector(info.Number, info.SealedCID, info.UnsealedCID, info.Randomness, info.InteractiveRandomness); err != nil {
			return false, err
		}
	}
	prover, err := proverID(aggregate.Miner)
	if err != nil {
		return false, err
	}
	valid, st, msg := ccuzk.VerifyAggregateSeals(api, uint32(version), prover, sectors, aggregate.Proof)
	return verdict("cuzk_verify_aggregate_seals", valid, st, msg)
}

// snarkPackVersion is an aggregation proof's SnarkPack version.
func snarkPackVersion(p abi.RegisteredAggregationProof) (cuzk.SnarkPackVersion, error) {
	switch p {
	case abi.RegisteredAggregationProof_SnarkPackV1:
		return cuzk.SnarkPackV1, nil
	case abi.RegisteredAggregationProof_SnarkPackV2:
		return cuzk.SnarkPackV2, nil
	}
	return 0, fmt.Errorf("no mapping to abi.RegisteredAggregationProof value available for: %v", p)
}

// verifyPoSt verifies proof of api over sectors.
func verifyPoSt(api string, randomness abi.PoStRandomness, miner abi.ActorID, sectors []proof.SectorInfo, proofBytes []byte) (bool, error) {
	prover, seed, err := postHead(miner, randomness)
	if err != nil {
		return false, err
	}
	list := make([]ccuzk.PoStSector, len(sectors))
	for i, s := range sectors {
		list[i].SectorID = uint64(s.SectorNumber)
		if list[i].CommR, err = commR(s.SealedCID); err != nil {
			return false, err
		}
	}
	valid, st, msg := ccuzk.VerifyPoSt(api, seed, prover, list, proofBytes)
	return verdict("cuzk_verify_post", valid, st, msg)
}

// VerifyWinningPoSt verifies a WinningPoSt (what
// GenerateWinningPoStWithVanilla returned) as filecoin-ffi's
// VerifyWinningPoSt does, with filecoin-proofs' verify_winning_post: the
// proof type is the challenged sectors' seal proof's WinningPoSt, the
// proofs' bytes are joined.
func VerifyWinningPoSt(info proof.WinningPoStVerifyInfo) (bool, error) {
	if len(info.ChallengedSectors) == 0 {
		return false, errors.New("no replicas supplied")
	}
	pt, err := info.ChallengedSectors[0].SealProof.RegisteredWinningPoStProof()
	if err != nil {
		return false, err
	}
	r, err := postRowOf(pt, cuzk.WinningPost, "WinningPoSt")
	if err != nil {
		return false, err
	}
	var bytes []byte
	for _, p := range info.Proofs {
		bytes = append(bytes, p.ProofBytes...)
	}
	return verifyPoSt(r.api, info.Randomness, info.Prover, info.ChallengedSectors, bytes)
}

// VerifyWindowPoSt verifies a WindowPoSt of every partition (what
// GenerateWindowPoStWithVanilla or MergeWindowPoStPartitionProofs returned)
// as filecoin-ffi's VerifyWindowPoSt does, with filecoin-proofs'
// verify_window_post: one proof, of its proof type.
func VerifyWindowPoSt(info proof.WindowPoStVerifyInfo) (bool, error) {
	if len(info.Proofs) == 0 {
		return false, errors.New("nothing to verify")
	}
	if len(info.Proofs) != 1 {
		return false, errors.New("only one version of PoSt supported")
	}
	r, err := postRowOf(info.Proofs[0].PoStProof, cuzk.WindowPost, "WindowPoSt")
	if err != nil {
		return false, err
	}
	return verifyPoSt(r.api, info.Randomness, info.Prover, info.ChallengedSectors, info.Proofs[0].ProofBytes)
}

// VerifyUpdateProof verifies a SnapDeals update proof (what
// GenerateUpdateProofWithVanilla returned) as filecoin-ffi's
// SectorUpdate.VerifyUpdateProof does, with filecoin-proofs'
// verify_empty_sector_update_proof.
func (FunctionsSectorUpdate) VerifyUpdateProof(info proof.ReplicaUpdateInfo) (bool, error) {
	r, err := updateRow(info.UpdateProofType)
	if err != nil {
		return false, err
	}
	oldR, err := commR(info.OldSealedSectorCID)
	if err != nil {
		return false, fmt.Errorf("transforming old CommR: %w", err)
	}
	newR, err := commR(info.NewSealedSectorCID)
	if err != nil {
		return false, fmt.Errorf("transforming new CommR: %w", err)
	}
	newD, err := commD(info.NewUnsealedSectorCID)
	if err != nil {
		return false, fmt.Errorf("transforming new CommD: %w", err)
	}
	valid, st, msg := ccuzk.VerifyUpdate(r.api, oldR, newR, newD, info.Proof)
	return verdict("cuzk_verify_update", valid, st, msg)
}
