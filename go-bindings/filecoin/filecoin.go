// Package filecoin is cuzk behind filecoin-ffi's proving calls: the same
// signatures, go-state-types types and output bytes, so that a Filecoin node
// (Lotus, Curio) can swap a call's import:
//
//	SealCommitPhase2, SealCommitPhase2CircuitProofs (NiPoRep's circuit proofs),
//	AggregateSealProofs, GenerateWinningPoStWithVanilla,
//	GenerateWindowPoStWithVanilla, GenerateSinglePartitionWindowPoStWithVanilla,
//	MergeWindowPoStPartitionProofs, SectorUpdate.GenerateUpdateProofWithVanilla.
//
// The package-level calls use a process-wide Prover made on first use
// (Configure sets it up first: backend, memory budget, directories); a Prover
// of one's own has the same calls as methods. Each circuit's PCE and
// parameters are loaded on its first proof (Prover.Prepare loads them ahead):
// the parameters from filecoin-ffi's parameter cache (FIL_PROOFS_PARAMETER_CACHE,
// else /var/tmp/filecoin-proof-parameters) under filecoin-proofs' file names,
// the PCE from Config.PCEDir, extracted there once when absent.
//
// Every registered proof of go-state-types maps to a cuzk circuit (SealCircuit,
// PoStCircuit, UpdateCircuit), except the retired V1 seal proofs, which are
// refused (ErrUnsupportedProof). Where a call differs from filecoin-ffi, its
// doc says how.
package filecoin
