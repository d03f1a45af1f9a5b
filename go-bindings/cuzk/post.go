package cuzk

import (
	"encoding/binary"
	"math"
)

// WinningPoStRequest is what filecoin-proofs-api's
// generate_winning_post_with_vanilla takes. Its Input goes in a Request for
// a WinningPost circuit of the same sector size.
type WinningPoStRequest struct {
	// ProofType is the registered proof as filecoin-proofs-api spells it,
	// e.g. "StackedDrgWinning32GiBV1".
	ProofType string
	// Randomness and ProverID are canonical scalars (little-endian), as the
	// API requires.
	Randomness [32]byte
	ProverID   [32]byte
	// VanillaProof is the one challenged sector's, as
	// generate_single_vanilla_proof returns it.
	VanillaProof []byte
}

// WindowPoStRequest is what generate_window_post_with_vanilla takes (every
// partition), or with Partition set what
// generate_single_window_post_with_vanilla takes (one partition). Its Input
// goes in a Request for a WindowPost circuit of the same sector size; the
// proof is 192 bytes per partition in order, the bytes of
// merge_window_post_partition_proofs.
type WindowPoStRequest struct {
	// ProofType is the registered proof, e.g. "StackedDrgWindow32GiBV1_2".
	ProofType  string
	Randomness [32]byte
	ProverID   [32]byte
	// VanillaProofs: each sector's, in any order (they are proven in
	// sector-id order, as the verifier reads them).
	VanillaProofs [][]byte
	// Partition: nil proves every partition; else the index of the one
	// partition whose sectors VanillaProofs holds.
	Partition *uint64
}

// Input is the request's encoding (docs/proofs.md, "PoSt and SnapDeals").
func (r WinningPoStRequest) Input() []byte {
	return postInput(r.ProofType, r.Randomness, r.ProverID, nil, [][]byte{r.VanillaProof})
}

// Input is the request's encoding (docs/proofs.md, "PoSt and SnapDeals").
func (r WindowPoStRequest) Input() []byte {
	return postInput(r.ProofType, r.Randomness, r.ProverID, r.Partition, r.VanillaProofs)
}

// postMagic and postVersion open every PoSt input.
const (
	postMagic   = "CUZKPOST"
	postVersion = 1
	// postHeadFixed: the magic, the version and the name's length.
	postHeadFixed = 8 + 4 + 4
)

func postInput(proofType string, randomness, proverID [32]byte, partition *uint64, vanilla [][]byte) []byte {
	size := postHeadFixed + len(proofType) + 32 + 32 + 8 + 8
	for _, v := range vanilla {
		size += 8 + len(v)
	}
	out := make([]byte, 0, size)
	out = append(out, postMagic...)
	out = binary.LittleEndian.AppendUint32(out, postVersion)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(proofType)))
	out = append(out, proofType...)
	out = append(out, randomness[:]...)
	out = append(out, proverID[:]...)
	k := uint64(math.MaxUint64)
	if partition != nil {
		k = *partition
	}
	out = binary.LittleEndian.AppendUint64(out, k)
	return appendBlobs(out, vanilla)
}

// SnapDealsRequest is what filecoin-proofs-api's
// generate_empty_sector_update_proof_with_vanilla takes. Its Input goes in a
// Request for a SnapDeals circuit of the same sector size; the proof is the
// partitions' 192-byte proofs in order.
type SnapDealsRequest struct {
	// ProofType is the registered update proof, e.g. "StackedDrg32GiBV1".
	ProofType                    string
	CommROld, CommRNew, CommDNew [32]byte
	// PartitionProofs are generate_partition_proofs' results, in order.
	PartitionProofs [][]byte
}

// Input is the request's encoding (docs/proofs.md, "PoSt and SnapDeals").
func (r SnapDealsRequest) Input() []byte {
	size := 16 + len(r.ProofType) + 96 + 8
	for _, v := range r.PartitionProofs {
		size += 8 + len(v)
	}
	out := make([]byte, 0, size)
	out = append(out, "CUZKSNAP"...)
	out = binary.LittleEndian.AppendUint32(out, 1)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(r.ProofType)))
	out = append(out, r.ProofType...)
	out = append(out, r.CommROld[:]...)
	out = append(out, r.CommRNew[:]...)
	out = append(out, r.CommDNew[:]...)
	return appendBlobs(out, r.PartitionProofs)
}

// appendBlobs appends a count, then each blob with its length.
func appendBlobs(out []byte, blobs [][]byte) []byte {
	out = binary.LittleEndian.AppendUint64(out, uint64(len(blobs)))
	for _, v := range blobs {
		out = binary.LittleEndian.AppendUint64(out, uint64(len(v)))
		out = append(out, v...)
	}
	return out
}
