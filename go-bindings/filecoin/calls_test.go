package filecoin

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
)

// TestSealCommitPhase2 proves the interactive 2 KiB C1 output as
// filecoin-ffi's SealCommitPhase2 does and the synthetic one as
// SealCommitPhase2CircuitProofs does, checks each proof, refuses another
// sector's or miner's call before proving, and aggregates seal proofs as
// AggregateSealProofs and (for NiPoRep) SealCommitPhase2 do.
func TestSealCommitPhase2(t *testing.T) {
	p := testProver(t)
	porep := cuzk.Porep("2KiB")
	c1 := fixture(t, "porep-2k-c1.json")
	sector := c1Sector(t, c1)
	for _, wrong := range [][2]uint64{{uint64(sector) + 1, uint64(fixtureMiner)}, {uint64(sector), uint64(fixtureMiner) + 1}} {
		if _, err := p.SealCommitPhase2(c1, abi.SectorNumber(wrong[0]), abi.ActorID(wrong[1])); err == nil {
			t.Fatalf("proven as sector %d of f0%d", wrong[0], wrong[1])
		}
	}
	for name, bad := range map[string][]byte{"not JSON": []byte("{]"), "no proof": []byte("{}"), "empty": nil} {
		if _, err := p.SealCommitPhase2(bad, 1, fixtureMiner); err == nil {
			t.Errorf("%s C1: proven", name)
		}
	}
	seal, err := p.SealCommitPhase2(c1, sector, fixtureMiner)
	if err != nil {
		t.Fatal(err)
	}
	if len(seal) != cuzk.ProofBytes {
		t.Fatalf("%d bytes", len(seal))
	}
	verify(t, p, porep, c1, seal)
	synthetic := fixture(t, "porep-2k-synthetic-c1.json")
	circuit, err := p.SealCommitPhase2CircuitProofs(synthetic, c1Sector(t, synthetic))
	if err != nil {
		t.Fatal(err)
	}
	verify(t, p, porep, synthetic, circuit)
	head, spt, _, _ := c1Of(c1)
	sealVerify := proof.SealVerifyInfo{
		SealProof: spt, SectorID: abi.SectorID{Miner: fixtureMiner, Number: sector},
		Randomness: head.Ticket[:], InteractiveRandomness: head.Seed[:], Proof: seal,
		SealedCID: sealedCID(t, head.CommR), UnsealedCID: unsealedCID(t, head.CommD),
	}
	verdictIs(t, "VerifySeal", true)(VerifySeal(sealVerify))
	other := sealVerify
	other.Number++
	verdictIs(t, "VerifySeal of another sector", false)(VerifySeal(other))
	synthHead, synthSpt, _, _ := c1Of(synthetic)
	synthVerify := proof.SealVerifyInfo{
		SealProof: synthSpt, SectorID: abi.SectorID{Miner: fixtureMiner, Number: c1Sector(t, synthetic)},
		Randomness: synthHead.Ticket[:], InteractiveRandomness: synthHead.Seed[:], Proof: circuit,
		SealedCID: sealedCID(t, synthHead.CommR), UnsealedCID: unsealedCID(t, synthHead.CommD),
	}
	verdictIs(t, "VerifySeal of SyntheticPoRep", true)(VerifySeal(synthVerify))
	synthVerify.Proof = append([]byte{}, circuit...)
	synthVerify.Proof[7] ^= 1
	verdictIs(t, "VerifySeal of a changed SyntheticPoRep proof", false)(VerifySeal(synthVerify))

	// Aggregation does not check what a proof proves (the verifier does):
	// the one proof stands in for two sectors' here.
	sealInfo := proof.AggregateSealVerifyInfo{
		Number: sector, SealedCID: sealedCID(t, head.CommR), UnsealedCID: unsealedCID(t, head.CommD),
		InteractiveRandomness: head.Seed[:], Randomness: head.Ticket[:],
	}
	info := proof.AggregateSealVerifyProofAndInfos{
		Miner: fixtureMiner, SealProof: abi.RegisteredSealProof_StackedDrg2KiBV1_1,
		AggregateProof: abi.RegisteredAggregationProof_SnarkPackV2, Infos: []proof.AggregateSealVerifyInfo{sealInfo, sealInfo},
	}
	seals := [][]byte{seal, seal}
	agg, err := p.AggregateSealProofs(info, seals)
	if err != nil {
		t.Fatal(err)
	}
	_, size, _ := cuzk.AggregateLen("StackedDrg2KiBV1_1", 2)
	if len(agg) != size {
		t.Fatalf("aggregate of %d bytes, want %d", len(agg), size)
	}
	if again, err := p.AggregateSealProofs(info, seals); err != nil || !bytes.Equal(again, agg) {
		t.Fatalf("the same aggregate again: %v", err)
	}
	v1 := info
	v1.AggregateProof = abi.RegisteredAggregationProof_SnarkPackV1
	aggV1, err := p.AggregateSealProofs(v1, seals)
	if err != nil || bytes.Equal(aggV1, agg) {
		t.Fatalf("SnarkPack v1: %v", err)
	}
	// The same sector twice is a valid aggregate of two seals.
	info.Proof, v1.Proof = agg, aggV1
	verdictIs(t, "VerifyAggregateSeals", true)(VerifyAggregateSeals(info))
	verdictIs(t, "VerifyAggregateSeals v1", true)(VerifyAggregateSeals(v1))
	v1.Proof = agg
	verdictIs(t, "VerifyAggregateSeals of a v2 aggregate as v1", false)(VerifyAggregateSeals(v1))
	info.Proof = nil
	for name, bad := range map[string]func(*proof.AggregateSealVerifyProofAndInfos){
		"a V1 seal proof": func(i *proof.AggregateSealVerifyProofAndInfos) {
			i.SealProof = abi.RegisteredSealProof_StackedDrg2KiBV1
		},
		"SnarkPack 2": func(i *proof.AggregateSealVerifyProofAndInfos) { i.AggregateProof = 2 },
		"fewer infos": func(i *proof.AggregateSealVerifyProofAndInfos) { i.Infos = i.Infos[:1] },
		"an unsealed CID": func(i *proof.AggregateSealVerifyProofAndInfos) {
			i.Infos = []proof.AggregateSealVerifyInfo{sealInfo, {SealedCID: sealInfo.UnsealedCID}}
		},
	} {
		i := info
		bad(&i)
		if _, err := p.AggregateSealProofs(i, seals); err == nil {
			t.Errorf("%s: aggregated", name)
		}
	}
	none := info
	none.Infos = nil
	if _, err := p.AggregateSealProofs(none, nil); err == nil {
		t.Error("no seals aggregated")
	}

	// An NiPoRep seal's 13 partitions: AggregateSealProofs' aggregate is the
	// one SealCommitPhase2 returns for them.
	ni := fixture(t, "porep-2k-non-interactive-c1.json")
	niSector := c1Sector(t, ni) // its replica id: go-state-types cannot derive it
	niHead, niProof, niRow, _ := c1Of(ni)
	partitions := bytes.Repeat(seal, 13)
	niAgg, err := p.AggregateSealProofs(proof.AggregateSealVerifyProofAndInfos{
		Miner: fixtureMiner, SealProof: niProof, AggregateProof: abi.RegisteredAggregationProof_SnarkPackV2,
		Infos: []proof.AggregateSealVerifyInfo{{Number: niSector, SealedCID: sealedCID(t, niHead.CommR), InteractiveRandomness: niHead.Seed[:]}},
	}, [][]byte{partitions})
	if err != nil {
		t.Fatal(err)
	}
	same, err := p.aggregate(niRow.api, []cuzk.SealProof{{Proof: partitions, CommR: niHead.CommR, Seed: niHead.Seed}}, cuzk.SnarkPackV2)
	if err != nil || !bytes.Equal(same, niAgg) {
		t.Fatalf("SealCommitPhase2's NiPoRep aggregate differs: %v", err)
	}
}

// TestNonInteractive proves the 2 KiB NiPoRep C1 (13 partitions: minutes on
// two cores) as SealCommitPhase2 does: the SnarkPack v2 aggregate of its
// partitions' proofs, which filecoin-proofs' verify_seal (VerifySeal) and
// verify_aggregate_seal_commit_proofs (VerifyAggregateSeals, the sector alone)
// accept, and refuse changed. SealCommitPhase2CircuitProofs proves as
// SealCommitPhase2 does, without the aggregate: TestSealCommitPhase2 calls it.
func TestNonInteractive(t *testing.T) {
	c1 := fixture(t, "porep-2k-non-interactive-c1.json")
	sector := c1Sector(t, c1)
	p := testProver(t)
	agg, err := p.SealCommitPhase2(c1, sector, fixtureMiner)
	if err != nil {
		t.Fatal(err)
	}
	head, spt, r, _ := c1Of(c1)
	if _, size, _ := cuzk.AggregateLen(r.api, 1); len(agg) != size {
		t.Fatalf("an aggregate of %d bytes, want %d", len(agg), size)
	}
	seal := proof.SealVerifyInfo{
		SealProof: spt, SectorID: abi.SectorID{Miner: fixtureMiner, Number: sector},
		Randomness: head.Ticket[:], InteractiveRandomness: head.Seed[:], Proof: agg,
		SealedCID: sealedCID(t, head.CommR), UnsealedCID: unsealedCID(t, head.CommD),
	}
	verdictIs(t, "VerifySeal", true)(VerifySeal(seal))
	aggregate := proof.AggregateSealVerifyProofAndInfos{
		Miner: fixtureMiner, SealProof: spt, AggregateProof: abi.RegisteredAggregationProof_SnarkPackV2, Proof: agg,
		Infos: []proof.AggregateSealVerifyInfo{{
			Number: sector, Randomness: seal.Randomness, InteractiveRandomness: seal.InteractiveRandomness,
			SealedCID: seal.SealedCID, UnsealedCID: seal.UnsealedCID,
		}},
	}
	verdictIs(t, "VerifyAggregateSeals", true)(VerifyAggregateSeals(aggregate))
	changed := append([]byte{}, agg...)
	changed[len(changed)/2] ^= 1
	seal.Proof, aggregate.Proof = changed, changed
	verdictIs(t, "VerifySeal of a changed aggregate", false)(VerifySeal(seal))
	verdictIs(t, "VerifyAggregateSeals of a changed aggregate", false)(VerifyAggregateSeals(aggregate))
}

// TestWinningPoSt proves the 2 KiB WinningPoSt fixture from filecoin-ffi's
// inputs: the request cuzk gets is the fixture's, byte for byte.
func TestWinningPoSt(t *testing.T) {
	input := fixture(t, "winning-post-2k.input")
	f := decodePoSt(t, input)
	_, got, err := winningInput(f.proofType, fixtureMiner, f.randomness, f.vanilla)
	if err != nil || !bytes.Equal(got, input) {
		t.Fatalf("the request differs from the fixture (%v)", err)
	}
	p := testProver(t)
	// Concurrent first calls share one load of the circuit.
	var wg sync.WaitGroup
	results := make([][]proof.PoStProof, 3)
	errs := make([]error, 3)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], errs[i] = p.GenerateWinningPoStWithVanilla(f.proofType, fixtureMiner, f.randomness, f.vanilla)
		}(i)
	}
	wg.Wait()
	for i, res := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if len(res) != 1 || res[0].PoStProof != f.proofType || len(res[0].ProofBytes) != cuzk.ProofBytes {
			t.Fatalf("%+v", res)
		}
		verify(t, p, cuzk.WinningPost("2KiB"), input, res[0].ProofBytes)
	}
	winning := proof.WinningPoStVerifyInfo{Randomness: f.randomness, Proofs: results[0], ChallengedSectors: challenged(t, f), Prover: fixtureMiner}
	verdictIs(t, "VerifyWinningPoSt", true)(VerifyWinningPoSt(winning))
	winning.Randomness = append(abi.PoStRandomness{f.randomness[0] ^ 1}, f.randomness[1:]...)
	verdictIs(t, "VerifyWinningPoSt of other randomness", false)(VerifyWinningPoSt(winning))
	window := abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1
	for name, call := range map[string]func() error{
		"two vanilla proofs": func() error {
			_, err := p.GenerateWinningPoStWithVanilla(f.proofType, fixtureMiner, f.randomness, append(f.vanilla, f.vanilla[0]))
			return err
		},
		"a WindowPoSt proof type": func() error {
			_, err := p.GenerateWinningPoStWithVanilla(window, fixtureMiner, f.randomness, f.vanilla)
			return err
		},
		"33 bytes of randomness": func() error {
			_, err := p.GenerateWinningPoStWithVanilla(f.proofType, fixtureMiner, append(f.randomness, 0), f.vanilla)
			return err
		},
	} {
		if call() == nil {
			t.Errorf("%s: proven", name)
		}
	}
}

// TestWindowPoSt proves the 2 KiB WindowPoSt fixture (one partition of two
// sectors) as one partition, merges it, and proves it whole.
func TestWindowPoSt(t *testing.T) {
	input := fixture(t, "window-post-2k.input")
	f := decodePoSt(t, input)
	if _, got, err := windowInput(f.proofType, fixtureMiner, f.randomness, f.vanilla, f.partition); err != nil || !bytes.Equal(got, input) {
		t.Fatalf("the request differs from the fixture (%v)", err)
	}
	p := testProver(t)
	window := cuzk.WindowPost("2KiB")
	part, err := p.GenerateSinglePartitionWindowPoStWithVanilla(f.proofType, fixtureMiner, f.randomness, f.vanilla, 0)
	if err != nil {
		t.Fatal(err)
	}
	zero := uint64(0)
	_, one, _ := windowInput(f.proofType, fixtureMiner, f.randomness, f.vanilla, &zero)
	verify(t, p, window, one, part.ProofBytes)
	if part.PoStProof != f.proofType || len(part.ProofBytes) != cuzk.ProofBytes {
		t.Fatalf("%+v", part)
	}
	merged, err := MergeWindowPoStPartitionProofs(f.proofType, []PartitionProof{*part})
	if err != nil || merged.PoStProof != f.proofType || !bytes.Equal(merged.ProofBytes, part.ProofBytes) {
		t.Fatalf("merged: %+v, %v", merged, err)
	}
	_, all, _ := windowInput(f.proofType, fixtureMiner, f.randomness, f.vanilla, nil)
	verify(t, p, window, all, merged.ProofBytes)
	whole, err := p.GenerateWindowPoStWithVanilla(f.proofType, fixtureMiner, f.randomness, f.vanilla)
	if err != nil || len(whole) != 1 || whole[0].PoStProof != f.proofType {
		t.Fatalf("%+v, %v", whole, err)
	}
	verify(t, p, window, all, whole[0].ProofBytes)
	windowInfo := proof.WindowPoStVerifyInfo{Randomness: f.randomness, Proofs: whole, ChallengedSectors: challenged(t, f), Prover: fixtureMiner}
	verdictIs(t, "VerifyWindowPoSt", true)(VerifyWindowPoSt(windowInfo))
	windowInfo.Proofs = []proof.PoStProof{*merged}
	verdictIs(t, "VerifyWindowPoSt of the merged partitions", true)(VerifyWindowPoSt(windowInfo))
	windowInfo.Randomness = append(abi.PoStRandomness{f.randomness[0] ^ 1}, f.randomness[1:]...)
	verdictIs(t, "VerifyWindowPoSt of other randomness", false)(VerifyWindowPoSt(windowInfo))
	if _, err := MergeWindowPoStPartitionProofs(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, []PartitionProof{*part}); err == nil {
		t.Fatal("a WinningPoSt merged")
	}
	two, err := MergeWindowPoStPartitionProofs(f.proofType, []PartitionProof{*part, *part})
	if err != nil || !bytes.Equal(two.ProofBytes, append(append([]byte{}, part.ProofBytes...), part.ProofBytes...)) {
		t.Fatalf("two partitions merged: %v", err)
	}
}

// TestUpdateProof proves the 2 KiB SnapDeals fixture from filecoin-ffi's
// inputs (CIDs, the partitions' vanilla proofs).
func TestUpdateProof(t *testing.T) {
	input := fixture(t, "snap-2k.input")
	oldR, newR, newD, vanilla := decodeUpdate(t, input)
	up := abi.RegisteredUpdateProof_StackedDrg2KiBV1
	if _, got, err := updateInput(up, oldR, newR, newD, vanilla); err != nil || !bytes.Equal(got, input) {
		t.Fatalf("the request differs from the fixture (%v)", err)
	}
	p := testProver(t)
	proofBytes, err := p.GenerateUpdateProofWithVanilla(up, oldR, newR, newD, vanilla)
	if err != nil {
		t.Fatal(err)
	}
	if len(proofBytes) != cuzk.ProofBytes {
		t.Fatalf("%d bytes", len(proofBytes))
	}
	verify(t, p, cuzk.SnapDeals("2KiB"), input, proofBytes)
	update := proof.ReplicaUpdateInfo{UpdateProofType: up, OldSealedSectorCID: oldR, NewSealedSectorCID: newR, NewUnsealedSectorCID: newD, Proof: proofBytes}
	verdictIs(t, "VerifyUpdateProof", true)(SectorUpdate.VerifyUpdateProof(update))
	update.OldSealedSectorCID, update.NewSealedSectorCID = newR, oldR
	verdictIs(t, "VerifyUpdateProof of swapped commitments", false)(SectorUpdate.VerifyUpdateProof(update))
	if _, err := p.GenerateUpdateProofWithVanilla(up, newD, newR, newD, vanilla); err == nil {
		t.Fatal("an unsealed CID as comm_r_old")
	}
	if _, err := p.GenerateUpdateProofWithVanilla(up, newR, oldR, newD, vanilla); err == nil {
		t.Fatal("swapped commitments proven")
	}
}

// TestDefaultProver: the package-level calls use the prover Configure set
// up; Configure afterwards is an error.
func TestDefaultProver(t *testing.T) {
	input := fixture(t, "winning-post-2k.input")
	f := decodePoSt(t, input)
	UseFixtures(t)
	// The default prover stays: the examples use it too.
	res, err := GenerateWinningPoStWithVanilla(f.proofType, fixtureMiner, f.randomness, f.vanilla)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, Default(), cuzk.WinningPost("2KiB"), input, res[0].ProofBytes)
	if err := Configure(Config{}); err == nil {
		t.Fatal("Configure after first use")
	}
	if Default().Config().PCEDir == "" {
		t.Fatal("no PCE directory")
	}
}

// TestMissingParams: a circuit whose parameters are not in the cache fails
// with the library's error, before any PCE is extracted; a closed prover
// refuses calls.
func TestMissingParams(t *testing.T) {
	p := NewProver(Config{Backend: cuzk.CPU, ParamsDir: t.TempDir()})
	_, err := p.GenerateWinningPoStWithVanilla(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, 1000, make([]byte, 32), [][]byte{{1}})
	if !errors.Is(err, cuzk.ErrFileNotFound) {
		t.Fatalf("%v", err)
	}
	if entries, _ := os.ReadDir(p.Config().PCEDir); len(entries) != 0 {
		t.Fatalf("%d PCE files", len(entries))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.GenerateWinningPoStWithVanilla(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, 1000, nil, [][]byte{{1}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
