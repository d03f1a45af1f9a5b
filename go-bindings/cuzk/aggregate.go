package cuzk

import (
	"context"
	"runtime"

	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
)

// SnarkPackVersion is a SnarkPack transcript version, as filecoin-proofs-api's
// RegisteredAggregationProof names them.
type SnarkPackVersion uint32

// The SnarkPack versions; V2 is what lotus and NonInteractivePoRep use.
const (
	SnarkPackV1 = SnarkPackVersion(ccuzk.SnarkPackV1)
	SnarkPackV2 = SnarkPackVersion(ccuzk.SnarkPackV2)
)

// SealProof is one sector's part of an aggregate: its C2 output (every
// partition's proof, what Prove returns for its C1) and its comm_r and
// interactive seed from the C1 (the seed is not used for NonInteractivePoRep).
type SealProof = ccuzk.SealProof

// AggregationSRS is a handle to the aggregation SRS (Filecoin's
// v28-fil-inner-product-v1.srs), read for aggregates up to a number of proofs.
type AggregationSRS struct {
	handle
	h ccuzk.AggSrs
}

func newAggregationSRS(h ccuzk.AggSrs) *AggregationSRS {
	s := &AggregationSRS{h: h}
	runtime.SetFinalizer(s, (*AggregationSRS).Close)
	return s
}

// LoadAggregationSRS reads what aggregating up to maxProofs Groth16 proofs (a
// power of two: AggregateLen's proofs) needs from the SRS file at path. A
// second load of the same unchanged file for the same maxProofs, while the
// first is open, shares it.
func LoadAggregationSRS(path string, maxProofs uint32) (*AggregationSRS, error) {
	h, s, msg := ccuzk.AggSrsLoad(path, maxProofs)
	if err := check("cuzk_agg_srs_load", s, msg); err != nil {
		return nil, err
	}
	return newAggregationSRS(h), nil
}

// GenerateAggregationSRS writes a test SRS for up to maxProofs proofs with
// secrets derived from seed to path and loads it. Never for production:
// whoever knows the seed can forge aggregates.
func GenerateAggregationSRS(path string, maxProofs uint32, seed uint64) (*AggregationSRS, error) {
	h, s, msg := ccuzk.AggSrsGenerate(path, maxProofs, seed)
	if err := check("cuzk_agg_srs_generate", s, msg); err != nil {
		return nil, err
	}
	return newAggregationSRS(h), nil
}

// Close frees the handle (waiting for calls in flight). Idempotent.
func (s *AggregationSRS) Close() error {
	return s.close(func() {
		ccuzk.AggSrsFree(s.h)
		s.h = ccuzk.AggSrs{}
		runtime.SetFinalizer(s, nil)
	})
}

// AggregateLen says how many Groth16 proofs an aggregate of seals sectors
// sealed with registeredProof (as a C1 spells it, e.g.
// "StackedDrg32GiBV1_2_Feat_NonInteractivePoRep") holds once padded (what the
// SRS must be loaded for) and how many bytes it takes.
func AggregateLen(registeredProof string, seals int) (proofs, bytes int, err error) {
	p, b, s, msg := ccuzk.AggregateLen(registeredProof, seals)
	if err := check("cuzk_aggregate_len", s, msg); err != nil {
		return 0, 0, err
	}
	return p, b, nil
}

// Aggregate aggregates the seal proofs of sectors sealed with registeredProof
// into one SnarkPack proof: the bytes filecoin-proofs'
// aggregate_seal_commit_proofs returns for the same inputs and SRS. Safe from
// many goroutines at once (counted among MaxCallsInC). While it waits for a
// place among them, ctx ending returns ctx.Err() and Close beginning
// ErrClosed; once in the library it runs to its end.
func (s *AggregationSRS) Aggregate(ctx context.Context, registeredProof string, seals []SealProof, version SnarkPackVersion) ([]byte, error) {
	_, size, err := AggregateLen(registeredProof, len(seals))
	if err != nil {
		return nil, err
	}
	if err := enterC(ctx, &s.handle); err != nil {
		return nil, err
	}
	defer leaveC()
	if err := s.acquire(); err != nil {
		return nil, err
	}
	defer s.release()
	out := make([]byte, size)
	n, st, msg := ccuzk.Aggregate(s.h, registeredProof, seals, uint32(version), out)
	runtime.KeepAlive(s)
	if err := check("cuzk_aggregate", st, msg); err != nil {
		return nil, err
	}
	return out[:n], nil
}
