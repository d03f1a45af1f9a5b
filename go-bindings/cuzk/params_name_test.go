package cuzk

import (
	"errors"
	"strings"
	"testing"
)

// TestParamsFileName: filecoin-proofs' names (parameters.json's), one per
// circuit; a synthetic circuit has none.
func TestParamsFileName(t *testing.T) {
	name, err := ParamsFileName(Porep("32GiB"))
	want := "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params"
	if err != nil || name != want {
		t.Fatalf("%q, %v", name, err)
	}
	seen := map[string]bool{}
	for _, size := range []string{"2KiB", "8MiB", "512MiB", "32GiB", "64GiB"} {
		for _, c := range []Circuit{Porep(size), WinningPost(size), WindowPost(size), SnapDeals(size)} {
			name, err := ParamsFileName(c)
			if err != nil || !strings.HasPrefix(name, "v28-") || !strings.HasSuffix(name, ".params") || seen[name] {
				t.Fatalf("%v: %q, %v", c, name, err)
			}
			seen[name] = true
		}
	}
	if _, err := ParamsFileName(Synthetic("sha256-chain", 1000)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("synthetic: %v", err)
	}
	if _, err := ParamsFileName(Porep("4KiB")); !errors.Is(err, ErrUnknownCircuit) {
		t.Fatalf("4KiB: %v", err)
	}
	if _, err := ParamsFileName(Porep("2KiB\x00")); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a NUL: %v", err)
	}
}
