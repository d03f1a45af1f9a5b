package filecoin_test

import (
	"fmt"
	"log"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
	"github.com/cuzk/cuzk/go-bindings/filecoin"
)

// in is what a node has from filecoin-ffi's other calls (SealCommitPhase1,
// GenerateSingleVanillaProof, SectorUpdate.GenerateUpdateVanillaProofs). The
// examples are compiled, not run: calls_test.go proves each call on the 2 KiB
// fixtures.
var in filecoin.ExampleInputs

// Set the prover up before the first call: here on the CPU, with a memory
// budget and the PCE files on a disk of their own; the parameters are in
// FIL_PROOFS_PARAMETER_CACHE, as for filecoin-ffi.
func ExampleConfigure() {
	err := filecoin.Configure(filecoin.Config{
		Backend: cuzk.CPU,
		Engine:  cuzk.EngineConfig{BudgetBytes: 64 << 30},
		PCEDir:  "/data/cuzk-pce",
	})
	if err != nil {
		log.Fatal(err)
	}
}

func ExampleSealCommitPhase2() {
	// phase1Output: ffi.SealCommitPhase1's output for this sector.
	sealProof, err := filecoin.SealCommitPhase2(in.Phase1Output, in.SectorNum, in.MinerID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("seal proof:", len(sealProof), "bytes")
}

func ExampleSealCommitPhase2CircuitProofs() {
	// For NiPoRep: the circuit proofs AggregateSealProofs aggregates.
	circuitProofs, err := filecoin.SealCommitPhase2CircuitProofs(in.Phase1Output, in.SectorNum)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("circuit proofs:", len(circuitProofs)/cuzk.ProofBytes)
}

func ExampleAggregateSealProofs() {
	// in.SealProof: what SealCommitPhase2 returned for the sector. Each sector's info, as the miner actor will verify the aggregate: here
	// the same sector twice.
	sector := proof.AggregateSealVerifyInfo{Number: in.SectorNum, SealedCID: in.SealedCID, InteractiveRandomness: in.Seed}
	aggregate, err := filecoin.AggregateSealProofs(proof.AggregateSealVerifyProofAndInfos{
		Miner:          in.MinerID,
		SealProof:      abi.RegisteredSealProof_StackedDrg2KiBV1_1,
		AggregateProof: abi.RegisteredAggregationProof_SnarkPackV2,
		Infos:          []proof.AggregateSealVerifyInfo{sector, sector},
	}, [][]byte{in.SealProof, in.SealProof})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("aggregate:", len(aggregate), "bytes")
}

func ExampleGenerateWinningPoStWithVanilla() {
	// The challenged sector's vanilla proof, from ffi.GenerateSingleVanillaProof.
	proofs, err := filecoin.GenerateWinningPoStWithVanilla(in.WinningType, in.MinerID, in.Randomness, in.WinningVanilla)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("winning PoSt:", len(proofs[0].ProofBytes), "bytes")
}

func ExampleGenerateWindowPoStWithVanilla() {
	proofs, err := filecoin.GenerateWindowPoStWithVanilla(in.WindowType, in.MinerID, in.Randomness, in.WindowVanilla)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("window PoSt:", len(proofs[0].ProofBytes), "bytes")
}

func ExampleGenerateSinglePartitionWindowPoStWithVanilla() {
	// Partition 0's sectors' vanilla proofs; each partition may be proven
	// on another machine, then merged.
	part, err := filecoin.GenerateSinglePartitionWindowPoStWithVanilla(in.WindowType, in.MinerID, in.Randomness, in.WindowVanilla, 0)
	if err != nil {
		log.Fatal(err)
	}
	merged, err := filecoin.MergeWindowPoStPartitionProofs(in.WindowType, []filecoin.PartitionProof{*part})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("window PoSt:", len(merged.ProofBytes), "bytes")
}

func ExampleFunctionsSectorUpdate_GenerateUpdateProofWithVanilla() {
	// The partitions' vanilla proofs, from ffi.SectorUpdate.GenerateUpdateVanillaProofs.
	updateProof, err := filecoin.SectorUpdate.GenerateUpdateProofWithVanilla(
		abi.RegisteredUpdateProof_StackedDrg2KiBV1, in.OldSealed, in.NewSealed, in.Unsealed, in.UpdateVanilla)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("update proof:", len(updateProof), "bytes")
}
