package filecoin

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	commcid "github.com/filecoin-project/go-fil-commcid"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/ipfs/go-cid"
)

// proverID is the prover id filecoin-ffi derives from a miner: the payload
// of its ID address, zero-padded.
func proverID(miner abi.ActorID) ([32]byte, error) {
	id, err := abi.MakeProverID(miner)
	if err != nil {
		return [32]byte{}, fmt.Errorf("failed to convert ActorID to prover id ([32]byte): %w", err)
	}
	return [32]byte(id), nil
}

// bytes32 is filecoin-ffi's conversion of randomness to 32 bytes: a shorter
// slice is zero-padded; a longer one (where filecoin-ffi panics) is an error.
func bytes32(what string, b []byte) ([32]byte, error) {
	var out [32]byte
	if len(b) > len(out) {
		return out, fmt.Errorf("%s has %d bytes, more than 32", what, len(b))
	}
	copy(out[:], b)
	return out, nil
}

func commR(sealed cid.Cid) ([32]byte, error) {
	b, err := commcid.CIDToReplicaCommitmentV1(sealed)
	if err != nil {
		return [32]byte{}, fmt.Errorf("failed to transform sealed CID to CommR: %w", err)
	}
	return bytes32("CommR", b)
}

func commD(unsealed cid.Cid) ([32]byte, error) {
	b, err := commcid.CIDToDataCommitmentV1(unsealed)
	if err != nil {
		return [32]byte{}, fmt.Errorf("failed to transform unsealed CID to CommD: %w", err)
	}
	return bytes32("CommD", b)
}

// replicaID is the replica id filecoin-proofs derives for a sector of miner
// sealed with p (its porep id: p's number, little-endian), as
// generate_replica_id does: sha256 of the prover id, the sector number
// (big-endian), the ticket, comm_d and the porep id, cut to a field element.
func replicaID(p abi.RegisteredSealProof, miner abi.ActorID, sector abi.SectorNumber, ticket, commD [32]byte) ([32]byte, error) {
	prover, err := proverID(miner)
	if err != nil {
		return [32]byte{}, err
	}
	var porepID [32]byte
	binary.LittleEndian.PutUint64(porepID[:8], uint64(p))
	h := sha256.New()
	h.Write(prover[:])
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(sector)))
	h.Write(ticket[:])
	h.Write(commD[:])
	h.Write(porepID[:])
	var id [32]byte
	copy(id[:], h.Sum(nil))
	id[31] &= 0b0011_1111
	return id, nil
}
