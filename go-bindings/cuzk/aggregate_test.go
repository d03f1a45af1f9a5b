package cuzk

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
)

// TestAggregate aggregates proofs made here standing in for three 2 KiB
// interactive seal proofs (one partition each: aggregation does not check what
// a proof proves; tests/seal_variants.rs has filecoin-proofs verify real
// ones), from goroutines at once under the race detector, and checks the
// refusals.
func TestAggregate(t *testing.T) {
	pce, params, _ := setup(t, 1000)
	const rp = "StackedDrg2KiBV1_1"
	seals := make([]SealProof, 3)
	for i := range seals {
		proof, _, err := Prove(context.Background(), Request{PCE: pce, Params: params, Seed: uint64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		seals[i] = SealProof{Proof: proof, CommR: [32]byte{byte(i)}, Seed: [32]byte{9, byte(i)}}
	}
	n, size, err := AggregateLen(rp, len(seals))
	if err != nil || n != 4 {
		t.Fatalf("AggregateLen: %d proofs, %v", n, err)
	}
	if _, _, err := AggregateLen("StackedDrg2KiBV9", 1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an unknown registered proof: %v", err)
	}
	srs, err := GenerateAggregationSRS(filepath.Join(t.TempDir(), "agg.srs"), uint32(n), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer srs.Close()

	want, err := srs.Aggregate(context.Background(), rp, seals, SnarkPackV2)
	if err != nil || len(want) != size {
		t.Fatalf("%d bytes (want %d), %v", len(want), size, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := srs.Aggregate(context.Background(), rp, seals, SnarkPackV2)
			if err == nil && !bytes.Equal(got, want) {
				err = errors.New("a different aggregate for the same inputs")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if v1, err := srs.Aggregate(context.Background(), rp, seals, SnarkPackV1); err != nil || bytes.Equal(v1, want) {
		t.Fatalf("v1: %v (equal to v2: %v)", err, bytes.Equal(v1, want))
	}
	if _, err := srs.Aggregate(context.Background(), rp, seals, SnarkPackVersion(3)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("version 3: %v", err)
	}
	short := append([]SealProof{}, seals...)
	short[1].Proof = short[1].Proof[:100]
	if _, err := srs.Aggregate(context.Background(), rp, short, SnarkPackV2); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a short proof: %v", err)
	}
	junk := append([]SealProof{}, seals...)
	junk[1].Proof = bytes.Repeat([]byte{0x5a}, ProofBytes)
	if _, err := srs.Aggregate(context.Background(), rp, junk, SnarkPackV2); !errors.Is(err, ErrMalformedProof) {
		t.Fatalf("a proof that is not points: %v", err)
	}
	small, err := LoadAggregationSRS(filepath.Join(t.TempDir(), "missing.srs"), 2)
	if !errors.Is(err, ErrFileNotFound) || small != nil {
		t.Fatalf("a missing SRS: %v", err)
	}
	srs.Close()
	if _, err := srs.Aggregate(context.Background(), rp, seals, SnarkPackV2); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
