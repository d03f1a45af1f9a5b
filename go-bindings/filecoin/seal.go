package filecoin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
)

// c1Head is what a C1 output (filecoin-proofs' SealCommitPhase1Output, JSON)
// says besides its vanilla proofs.
type c1Head struct {
	RegisteredProof string   `json:"registered_proof"`
	CommR           [32]byte `json:"comm_r"`
	CommD           [32]byte `json:"comm_d"`
	ReplicaID       [32]byte `json:"replica_id"`
	Seed            [32]byte `json:"seed"`
	Ticket          [32]byte `json:"ticket"`
}

// c1Of reads phase1Output's head and its seal proof's row; the library
// parses and checks the rest when it proves.
func c1Of(phase1Output []byte) (c1Head, abi.RegisteredSealProof, row, error) {
	var h c1Head
	if err := json.Unmarshal(phase1Output, &h); err != nil {
		return h, 0, row{}, fmt.Errorf("filecoin: the C1 output is not filecoin-proofs' JSON: %w", err)
	}
	p, r, err := sealNamed(h.RegisteredProof)
	return h, p, r, err
}

// SealCommitPhase2 is the default prover's SealCommitPhase2.
func SealCommitPhase2(phase1Output []byte, sectorNum abi.SectorNumber, minerID abi.ActorID) ([]byte, error) {
	return Default().SealCommitPhase2(phase1Output, sectorNum, minerID)
}

// SealCommitPhase2 proves a C1 output (phase1Output: the bytes
// SealCommitPhase1 returned) as filecoin-ffi's SealCommitPhase2 does, with
// the same bytes: every partition's proof concatenated for V1_1 and
// SyntheticPoRep, and for NiPoRep their SnarkPack v2 aggregate (made with the
// aggregation SRS from the parameter cache).
//
// Like filecoin-proofs, it refuses a C1 output whose replica id is not that of
// sector sectorNum of minerID (filecoin-proofs finds it by verifying the proof
// with the replica id it derives from them; here the replica id is checked
// before proving, and each partition's proof is verified against the C1's
// public inputs). An NiPoRep aggregate is made from verified proofs by
// filecoin-proofs' aggregation, byte for byte, but not verified again as
// filecoin-proofs verifies it.
func (p *Prover) SealCommitPhase2(phase1Output []byte, sectorNum abi.SectorNumber, minerID abi.ActorID) ([]byte, error) {
	head, spt, r, err := c1Of(phase1Output)
	if err != nil {
		return nil, err
	}
	want, err := replicaID(spt, minerID, sectorNum, head.Ticket, head.CommD)
	if err != nil {
		return nil, err
	}
	if want != head.ReplicaID {
		return nil, fmt.Errorf("filecoin: post-seal verification sanity check failed: the C1 output is not of sector %d of miner f0%d (its replica id differs)", sectorNum, minerID)
	}
	proofs, err := p.prove(r.circuit, phase1Output, false)
	if err != nil || !spt.IsNonInteractive() {
		return proofs, err
	}
	return p.aggregate(r.api, []cuzk.SealProof{{Proof: proofs, CommR: head.CommR, Seed: head.Seed}}, cuzk.SnarkPackV2)
}

// SealCommitPhase2CircuitProofs is the default prover's
// SealCommitPhase2CircuitProofs.
func SealCommitPhase2CircuitProofs(phase1Output []byte, sectorNum abi.SectorNumber) ([]byte, error) {
	return Default().SealCommitPhase2CircuitProofs(phase1Output, sectorNum)
}

// SealCommitPhase2CircuitProofs proves a C1 output and returns every
// partition's proof, concatenated, as filecoin-ffi's call of the name does:
// for NiPoRep the proofs AggregateSealProofs aggregates with other sectors'
// (126 partitions at 32 GiB). sectorNum is not used (filecoin-proofs only
// logs it). Each partition's proof is verified against the C1's public
// inputs before it is returned.
func (p *Prover) SealCommitPhase2CircuitProofs(phase1Output []byte, sectorNum abi.SectorNumber) ([]byte, error) {
	_, _, r, err := c1Of(phase1Output)
	if err != nil {
		return nil, err
	}
	return p.prove(r.circuit, phase1Output, false)
}

// AggregateSealProofs is the default prover's AggregateSealProofs.
func AggregateSealProofs(aggregateInfo proof.AggregateSealVerifyProofAndInfos, proofs [][]byte) ([]byte, error) {
	return Default().AggregateSealProofs(aggregateInfo, proofs)
}

// AggregateSealProofs aggregates the sectors' seal proofs (proofs[i]: what
// SealCommitPhase2, or SealCommitPhase2CircuitProofs for NiPoRep, returned for
// aggregateInfo.Infos[i]) into one SnarkPack proof, as filecoin-ffi does: the
// bytes filecoin-proofs' aggregate_seal_commit_proofs returns. It uses
// aggregateInfo's SealProof, AggregateProof, and each info's SealedCID and
// InteractiveRandomness, and the aggregation SRS of the parameter cache.
func (p *Prover) AggregateSealProofs(aggregateInfo proof.AggregateSealVerifyProofAndInfos, proofs [][]byte) ([]byte, error) {
	r, err := sealRow(aggregateInfo.SealProof)
	if err != nil {
		return nil, err
	}
	version, err := snarkPackVersion(aggregateInfo.AggregateProof)
	if err != nil {
		return nil, err
	}
	if len(proofs) != len(aggregateInfo.Infos) {
		return nil, fmt.Errorf("filecoin: %d proofs for %d seal infos", len(proofs), len(aggregateInfo.Infos))
	}
	seals := make([]cuzk.SealProof, len(proofs))
	for i, info := range aggregateInfo.Infos {
		commR, err := commR(info.SealedCID)
		if err != nil {
			return nil, err
		}
		seed, err := bytes32("InteractiveRandomness", info.InteractiveRandomness)
		if err != nil {
			return nil, err
		}
		seals[i] = cuzk.SealProof{Proof: proofs[i], CommR: commR, Seed: seed}
	}
	return p.aggregate(r.api, seals, version)
}

// aggregate aggregates seals of the seal proof filecoin-proofs-api names api.
func (p *Prover) aggregate(api string, seals []cuzk.SealProof, version cuzk.SnarkPackVersion) ([]byte, error) {
	if len(seals) == 0 {
		return nil, errors.New("cannot aggregate with empty outputs")
	}
	n, _, err := cuzk.AggregateLen(api, len(seals))
	if err != nil {
		return nil, err
	}
	srs, err := p.aggregationSRS(n)
	if err != nil {
		return nil, err
	}
	return srs.Aggregate(context.Background(), api, seals, version)
}
