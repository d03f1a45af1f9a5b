package filecoin

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	commcid "github.com/filecoin-project/go-fil-commcid"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/ipfs/go-cid"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
)

// TestTableCoversGoStateTypes walks go-state-types' own lists of registered
// proofs: each maps to the circuit of its sector size and kind, whose
// production parameters have a name, under the name filecoin-proofs-api
// gives it (the library parses the seal and PoSt names); the V1 seal proofs
// and unknown numbers are refused.
func TestTableCoversGoStateTypes(t *testing.T) {
	updatesSeen := map[abi.RegisteredUpdateProof]bool{}
	for spt, info := range abi.SealProofInfos {
		label := info.SectorSize.ShortString()
		c, err := SealCircuit(spt)
		if spt <= abi.RegisteredSealProof_StackedDrg64GiBV1 {
			if !errors.Is(err, ErrUnsupportedProof) {
				t.Errorf("seal proof %d: %v, want refused", spt, err)
			}
		} else {
			if err != nil || c != cuzk.Porep(label) {
				t.Errorf("seal proof %d: %v, %v", spt, c, err)
				continue
			}
			checkParamsName(t, c)
			// The library knows the name (and the partitions of an interactive seal).
			r := seals[spt]
			if n, _, err := cuzk.AggregateLen(r.api, 1); err != nil || !spt.IsNonInteractive() && uint64(n) < info.ProofSize/192 {
				t.Errorf("seal proof %d (%s): AggregateLen %d, %v", spt, r.api, n, err)
			}
		}
		for _, pp := range []abi.RegisteredPoStProof{info.WinningPoStProof, info.WindowPoStProof} {
			want := cuzk.WindowPost(label)
			if pp == info.WinningPoStProof {
				want = cuzk.WinningPost(label)
			}
			checkPoSt(t, pp, want)
			if pp == info.WindowPoStProof {
				v11, err := pp.ToV1_1PostProof()
				if err != nil {
					t.Fatal(err)
				}
				checkPoSt(t, v11, want)
			}
		}
		c, err = UpdateCircuit(info.UpdateProof)
		if err != nil || c != cuzk.SnapDeals(label) {
			t.Errorf("update proof %d: %v, %v", info.UpdateProof, c, err)
		}
		updatesSeen[info.UpdateProof] = true
	}
	for pp := range abi.PoStProofInfos {
		if _, err := PoStCircuit(pp); err != nil {
			t.Errorf("PoSt proof %d: %v", pp, err)
		}
	}
	if len(abi.SealProofInfos) != len(seals) || len(abi.PoStProofInfos) != len(posts) || len(updatesSeen) != len(updates) {
		t.Fatalf("the table has %d/%d/%d proofs, go-state-types %d/%d/%d",
			len(seals), len(posts), len(updates), len(abi.SealProofInfos), len(abi.PoStProofInfos), len(updatesSeen))
	}
	if r := posts[abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1]; r.api != "StackedDrgWindow32GiBV1_2" {
		t.Fatalf("go-state-types' Window V1_1 is filecoin-proofs-api's %s", r.api)
	}
	for _, bad := range []error{
		func() error { _, err := SealCircuit(-1); return err }(),
		func() error { _, err := SealCircuit(20); return err }(),
		func() error { _, err := PoStCircuit(-1); return err }(),
		func() error { _, err := PoStCircuit(15); return err }(),
		func() error { _, err := UpdateCircuit(5); return err }(),
	} {
		if !errors.Is(bad, ErrUnsupportedProof) {
			t.Errorf("an unknown proof: %v", bad)
		}
	}
	if _, _, err := sealNamed("StackedDrg4KiBV1_1"); !errors.Is(err, ErrUnsupportedProof) {
		t.Errorf("an unknown C1 proof name: %v", err)
	}
}

func checkParamsName(t *testing.T, c cuzk.Circuit) {
	t.Helper()
	if name, err := cuzk.ParamsFileName(c); err != nil || len(name) < 60 || name[:4] != "v28-" {
		t.Errorf("%v: parameters %q, %v", c, name, err)
	}
}

// checkPoSt: pp is proven by want, and the library parses its name.
func checkPoSt(t *testing.T, pp abi.RegisteredPoStProof, want cuzk.Circuit) {
	t.Helper()
	c, err := PoStCircuit(pp)
	if err != nil || c != want {
		t.Errorf("PoSt proof %d: %v, %v", pp, c, err)
		return
	}
	checkParamsName(t, c)
	r := posts[pp]
	input := cuzk.WindowPoStRequest{ProofType: r.api, VanillaProofs: [][]byte{{1}}}.Input()
	if _, err := cuzk.RequestProofLen(c, input); err != nil {
		t.Errorf("PoSt proof %d (%s): %v", pp, r.api, err)
	}
}

// TestReplicaID: the replica id derived here is go-state-types' (which knows
// every seal proof but NiPoRep's; the NiPoRep fixture checks that one).
func TestReplicaID(t *testing.T) {
	var ticket, commD [32]byte
	for spt := range abi.SealProofInfos {
		if spt.IsNonInteractive() {
			continue
		}
		rand.Read(ticket[:])
		rand.Read(commD[:])
		want, err := spt.ReplicaId(1234, 99, ticket[:], commD[:])
		if err != nil {
			t.Fatal(err)
		}
		got, err := replicaID(spt, 1234, 99, ticket, commD)
		if err != nil || !bytes.Equal(got[:], want[:]) {
			t.Fatalf("seal proof %d: %x, want %x (%v)", spt, got, want, err)
		}
	}
}

// TestConversions: filecoin-ffi's conversions of randomness and CIDs.
func TestConversions(t *testing.T) {
	if b, err := bytes32("randomness", []byte{1, 2}); err != nil || b[0] != 1 || b[1] != 2 || b[2] != 0 {
		t.Fatalf("short randomness: %x, %v", b, err)
	}
	if _, err := bytes32("randomness", make([]byte, 33)); err == nil {
		t.Fatal("33 bytes of randomness accepted")
	}
	id, err := proverID(1000)
	if err != nil || id[0] != 0xe8 || id[1] != 0x07 || id[2] != 0 {
		t.Fatalf("prover id of f01000: %x, %v", id, err)
	}
	sealed := sealedCID(t, [32]byte{7})
	if b, err := commR(sealed); err != nil || b != [32]byte{7} {
		t.Fatalf("%x, %v", b, err)
	}
	if _, err := commD(sealed); err == nil {
		t.Fatal("a sealed CID taken as an unsealed one")
	}
}

func sealedCID(t testing.TB, b [32]byte) cid.Cid {
	t.Helper()
	c, err := commcid.ReplicaCommitmentV1ToCID(b[:])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func unsealedCID(t testing.TB, b [32]byte) cid.Cid {
	t.Helper()
	c, err := commcid.DataCommitmentV1ToCID(b[:])
	if err != nil {
		t.Fatal(err)
	}
	return c
}
