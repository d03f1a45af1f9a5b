package filecoin

import (
	"errors"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
)

// ErrUnsupportedProof is wrapped by the error of a call for a registered
// proof cuzk does not prove (the retired V1 seal proofs) or does not know.
var ErrUnsupportedProof = errors.New("filecoin: registered proof not proven by cuzk")

// row is what cuzk proves one registered proof with.
type row struct {
	// circuit is cuzk's circuit; zero where refused says why.
	circuit cuzk.Circuit
	// api is the proof's name in filecoin-proofs-api, which cuzk's inputs
	// carry: go-state-types' StackedDrgWindow32GiBV1_1 is its
	// StackedDrgWindow32GiBV1_2.
	api string
	// label is the sector size ("32GiB").
	label   string
	refused string
}

// size is one sector size's registered proofs in go-state-types.
type size struct {
	label                                               string
	sealV1, sealV1_1, sealSynthetic, sealNonInteractive abi.RegisteredSealProof
	winning, windowV1, windowV1_1                       abi.RegisteredPoStProof
	update                                              abi.RegisteredUpdateProof
}

var sizes = [...]size{
	{"2KiB", abi.RegisteredSealProof_StackedDrg2KiBV1, abi.RegisteredSealProof_StackedDrg2KiBV1_1,
		abi.RegisteredSealProof_StackedDrg2KiBV1_1_Feat_SyntheticPoRep, abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep,
		abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1,
		abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, abi.RegisteredUpdateProof_StackedDrg2KiBV1},
	{"8MiB", abi.RegisteredSealProof_StackedDrg8MiBV1, abi.RegisteredSealProof_StackedDrg8MiBV1_1,
		abi.RegisteredSealProof_StackedDrg8MiBV1_1_Feat_SyntheticPoRep, abi.RegisteredSealProof_StackedDrg8MiBV1_2_Feat_NiPoRep,
		abi.RegisteredPoStProof_StackedDrgWinning8MiBV1, abi.RegisteredPoStProof_StackedDrgWindow8MiBV1,
		abi.RegisteredPoStProof_StackedDrgWindow8MiBV1_1, abi.RegisteredUpdateProof_StackedDrg8MiBV1},
	{"512MiB", abi.RegisteredSealProof_StackedDrg512MiBV1, abi.RegisteredSealProof_StackedDrg512MiBV1_1,
		abi.RegisteredSealProof_StackedDrg512MiBV1_1_Feat_SyntheticPoRep, abi.RegisteredSealProof_StackedDrg512MiBV1_2_Feat_NiPoRep,
		abi.RegisteredPoStProof_StackedDrgWinning512MiBV1, abi.RegisteredPoStProof_StackedDrgWindow512MiBV1,
		abi.RegisteredPoStProof_StackedDrgWindow512MiBV1_1, abi.RegisteredUpdateProof_StackedDrg512MiBV1},
	{"32GiB", abi.RegisteredSealProof_StackedDrg32GiBV1, abi.RegisteredSealProof_StackedDrg32GiBV1_1,
		abi.RegisteredSealProof_StackedDrg32GiBV1_1_Feat_SyntheticPoRep, abi.RegisteredSealProof_StackedDrg32GiBV1_2_Feat_NiPoRep,
		abi.RegisteredPoStProof_StackedDrgWinning32GiBV1, abi.RegisteredPoStProof_StackedDrgWindow32GiBV1,
		abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1, abi.RegisteredUpdateProof_StackedDrg32GiBV1},
	{"64GiB", abi.RegisteredSealProof_StackedDrg64GiBV1, abi.RegisteredSealProof_StackedDrg64GiBV1_1,
		abi.RegisteredSealProof_StackedDrg64GiBV1_1_Feat_SyntheticPoRep, abi.RegisteredSealProof_StackedDrg64GiBV1_2_Feat_NiPoRep,
		abi.RegisteredPoStProof_StackedDrgWinning64GiBV1, abi.RegisteredPoStProof_StackedDrgWindow64GiBV1,
		abi.RegisteredPoStProof_StackedDrgWindow64GiBV1_1, abi.RegisteredUpdateProof_StackedDrg64GiBV1},
}

// The table: every registered proof of go-state-types, seal, PoSt and
// update, and what cuzk proves it with (or why it does not).
var (
	seals   = map[abi.RegisteredSealProof]row{}
	posts   = map[abi.RegisteredPoStProof]row{}
	updates = map[abi.RegisteredUpdateProof]row{}
)

func init() {
	for _, s := range sizes {
		l := s.label
		seals[s.sealV1] = row{api: "StackedDrg" + l + "V1", label: l, refused: "the V1 seal proofs, retired at network version 7, are not proven by cuzk (V1_1, V1_1_Feat_SyntheticPoRep and V1_2_Feat_NiPoRep are)"}
		porep := cuzk.Porep(l)
		seals[s.sealV1_1] = row{circuit: porep, api: "StackedDrg" + l + "V1_1", label: l}
		seals[s.sealSynthetic] = row{circuit: porep, api: "StackedDrg" + l + "V1_1_Feat_SyntheticPoRep", label: l}
		seals[s.sealNonInteractive] = row{circuit: porep, api: "StackedDrg" + l + "V1_2_Feat_NonInteractivePoRep", label: l}
		posts[s.winning] = row{circuit: cuzk.WinningPost(l), api: "StackedDrgWinning" + l + "V1", label: l}
		posts[s.windowV1] = row{circuit: cuzk.WindowPost(l), api: "StackedDrgWindow" + l + "V1", label: l}
		posts[s.windowV1_1] = row{circuit: cuzk.WindowPost(l), api: "StackedDrgWindow" + l + "V1_2", label: l}
		updates[s.update] = row{circuit: cuzk.SnapDeals(l), api: "StackedDrg" + l + "V1", label: l}
	}
}

func lookup[P ~int64](table map[P]row, kind string, p P) (row, error) {
	r, ok := table[p]
	switch {
	case !ok:
		return row{}, fmt.Errorf("%w: unknown abi.Registered%sProof %d", ErrUnsupportedProof, kind, int64(p))
	case r.refused != "":
		return row{}, fmt.Errorf("%w: abi.Registered%sProof %d (%s): %s", ErrUnsupportedProof, kind, int64(p), r.api, r.refused)
	}
	return r, nil
}

func sealRow(p abi.RegisteredSealProof) (row, error)     { return lookup(seals, "Seal", p) }
func postRow(p abi.RegisteredPoStProof) (row, error)     { return lookup(posts, "PoSt", p) }
func updateRow(p abi.RegisteredUpdateProof) (row, error) { return lookup(updates, "Update", p) }

// sealNamed is the registered seal proof filecoin-proofs-api spells name (a
// C1 output's registered_proof).
func sealNamed(name string) (abi.RegisteredSealProof, row, error) {
	for p, r := range seals {
		if r.api == name {
			r, err := sealRow(p)
			return p, r, err
		}
	}
	return 0, row{}, fmt.Errorf("%w: unknown registered seal proof %q", ErrUnsupportedProof, name)
}

// SealCircuit is the cuzk circuit that proves p: one PoRep circuit per sector
// size for its V1_1, SyntheticPoRep and NiPoRep proofs.
func SealCircuit(p abi.RegisteredSealProof) (cuzk.Circuit, error) {
	r, err := sealRow(p)
	return r.circuit, err
}

// PoStCircuit is the cuzk circuit that proves p: WindowPoSt V1 and V1_1
// share one per sector size.
func PoStCircuit(p abi.RegisteredPoStProof) (cuzk.Circuit, error) {
	r, err := postRow(p)
	return r.circuit, err
}

// UpdateCircuit is the cuzk circuit that proves p.
func UpdateCircuit(p abi.RegisteredUpdateProof) (cuzk.Circuit, error) {
	r, err := updateRow(p)
	return r.circuit, err
}
