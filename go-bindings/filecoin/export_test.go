package filecoin

import (
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/ipfs/go-cid"
)

// ExampleInputs are what a node has from filecoin-ffi's other calls, for
// the examples (package filecoin_test).
type ExampleInputs struct {
	Phase1Output                  []byte
	SealedCID                     cid.Cid
	Seed                          abi.InteractiveSealRandomness
	SealProof                     []byte
	SectorNum                     abi.SectorNumber
	MinerID                       abi.ActorID
	WinningType, WindowType       abi.RegisteredPoStProof
	Randomness                    abi.PoStRandomness
	WinningVanilla, WindowVanilla [][]byte
	OldSealed, NewSealed          cid.Cid
	Unsealed                      cid.Cid
	UpdateVanilla                 [][]byte
}
