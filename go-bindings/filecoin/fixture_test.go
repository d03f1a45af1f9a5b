package filecoin

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
)

// The 2 KiB fixtures of scripts/test.sh (CUZK_TEST_FIXTURES): C1 outputs of
// the three seal proofs (miner f01000), WinningPoSt, WindowPoSt and SnapDeals
// inputs, and real parameters for their circuits, which testParams places in
// a parameter cache of its own under their production names.
var (
	fixtureOnce  sync.Once
	fixtureCache string // the parameter cache, removed by TestMain
	fixtureErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureCache != "" {
		os.RemoveAll(fixtureCache)
	}
	os.Exit(code)
}

// fixtureDir is CUZK_TEST_FIXTURES; the test is skipped without it.
func fixtureDir(t testing.TB) string {
	dir := os.Getenv("CUZK_TEST_FIXTURES")
	if dir == "" {
		t.Skip("CUZK_TEST_FIXTURES not set (scripts/test.sh sets it)")
	}
	return dir
}

func fixture(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join(fixtureDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testParams is a parameter cache holding the fixtures' parameters under
// their production names (hard links, else copies: the library refuses
// symlinks; their decoded caches too where scripts/test.sh left them) and a
// test aggregation SRS.
func testParams(t testing.TB) string {
	dir := fixtureDir(t)
	fixtureOnce.Do(func() { fixtureCache, fixtureErr = makeParamsCache(dir) })
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixtureCache
}

func makeParamsCache(dir string) (string, error) {
	cache, err := os.MkdirTemp("", "cuzk-filecoin-params-")
	if err != nil {
		return "", err
	}
	// filecoin-proofs' verifiers (VerifySeal…) read their keys from here,
	// once per process: set before the library first runs them.
	if err := os.Setenv("FIL_PROOFS_PARAMETER_CACHE", cache); err != nil {
		return cache, err
	}
	for file, c := range map[string]cuzk.Circuit{
		"porep-2k.params": cuzk.Porep("2KiB"), "winning-post-2k.params": cuzk.WinningPost("2KiB"),
		"window-post-2k.params": cuzk.WindowPost("2KiB"), "snap-2k.params": cuzk.SnapDeals("2KiB"),
	} {
		name, err := cuzk.ParamsFileName(c)
		if err != nil {
			return cache, err
		}
		if err := place(filepath.Join(dir, file), filepath.Join(cache, name)); err != nil {
			return cache, err
		}
		if err := writeVK(filepath.Join(cache, name)); err != nil {
			return cache, err
		}
		if _, err := os.Stat(filepath.Join(dir, file+".cuzk-srs")); err == nil {
			if err := place(filepath.Join(dir, file+".cuzk-srs"), filepath.Join(cache, name+".cuzk-srs")); err != nil {
				return cache, err
			}
		}
	}
	// Two non-interactive seals' 26 partitions, padded.
	srs, err := cuzk.GenerateAggregationSRS(filepath.Join(cache, AggregationSRSFileName), 32, 5)
	if err != nil {
		return cache, err
	}
	return cache, srs.Close()
}

// writeVK writes the verifying key of the .params file params beside it
// (".vk"), where filecoin-proofs' verifiers look: bellperson's
// Parameters::write begins with VerifyingKey::write, so the key is the file's
// prefix: α, β in G1, β, γ in G2, δ in G1 and G2 (864 bytes), then a
// big-endian u32 count of IC points of 96 bytes each.
func writeVK(params string) error {
	f, err := os.Open(params)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 868)
	if _, err := io.ReadFull(f, head); err != nil {
		return err
	}
	vk := make([]byte, 868+96*int(binary.BigEndian.Uint32(head[864:])))
	if _, err := f.ReadAt(vk, 0); err != nil {
		return err
	}
	return os.WriteFile(strings.TrimSuffix(params, ".params")+".vk", vk, 0o644)
}

// challenged is the sectors a PoSt fixture's vanilla proofs are of (each
// encoding begins with its sector id, little-endian, and comm_r), sealed with
// the 2 KiB V1_1 seal proof.
func challenged(t testing.TB, f postFixture) []proof.SectorInfo {
	t.Helper()
	var sectors []proof.SectorInfo
	for _, v := range f.vanilla {
		var r [32]byte
		copy(r[:], v[8:40])
		sectors = append(sectors, proof.SectorInfo{
			SealProof:    abi.RegisteredSealProof_StackedDrg2KiBV1_1,
			SectorNumber: abi.SectorNumber(binary.LittleEndian.Uint64(v)), SealedCID: sealedCID(t, r),
		})
	}
	return sectors
}

// verdictIs fails t unless a Verify call's result is want (true: valid and no
// error; false: not valid, an error allowed, as filecoin-proofs refuses some
// bad inputs).
func verdictIs(t *testing.T, what string, want bool) func(bool, error) {
	return func(valid bool, err error) {
		t.Helper()
		if valid != want || (want && err != nil) {
			t.Fatalf("%s: valid %v (%v), want %v", what, valid, err, want)
		}
	}
}

// place hard-links from to to, or copies it.
func place(from, to string) error {
	if os.Link(from, to) == nil {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// testProver proves on the CPU from the test parameter cache.
func testProver(t testing.TB) *Prover {
	p := NewProver(Config{Backend: cuzk.CPU, Engine: cuzk.EngineConfig{CPUOnly: true}, ParamsDir: testParams(t)})
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// verify checks proof against the request input of circuit c with the
// parameters p loaded for it: every partition's Groth16 proof against the
// public inputs filecoin-proofs derives from the input.
func verify(t *testing.T, p *Prover, c cuzk.Circuit, input, proof []byte) {
	t.Helper()
	_, params, err := p.resident(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := cuzk.Verify(cuzk.Request{Circuit: &c, Params: params, Input: input}, proof); err != nil {
		t.Fatalf("%v: %v", c, err)
	}
}

// fixtureMiner is the miner the fixtures were made for.
const fixtureMiner = abi.ActorID(1000)

// c1Sector is the sector number the C1 output was sealed as (for miner
// f01000): the one whose replica id it holds.
func c1Sector(t testing.TB, c1 []byte) abi.SectorNumber {
	head, spt, _, err := c1Of(c1)
	if err != nil {
		t.Fatal(err)
	}
	// The fixtures draw it from 1 ..= 1,000,000.
	for s := abi.SectorNumber(1); s <= 1_000_000; s++ {
		if id, err := replicaID(spt, fixtureMiner, s, head.Ticket, head.CommD); err == nil && id == head.ReplicaID {
			return s
		}
	}
	t.Fatal("no sector of f01000 has the C1's replica id")
	return 0
}

// postFixture is a PoSt fixture's fields (docs/proofs.md, "PoSt and SnapDeals").
type postFixture struct {
	proofType  abi.RegisteredPoStProof
	randomness abi.PoStRandomness
	prover     [32]byte
	partition  *uint64
	vanilla    [][]byte
}

func decodePoSt(t testing.TB, b []byte) postFixture {
	t.Helper()
	le := binary.LittleEndian
	n := int(le.Uint32(b[12:]))
	name, rest := string(b[16:16+n]), b[16+n:]
	var f postFixture
	f.proofType = -1
	for pp, r := range posts {
		if r.api == name {
			f.proofType = pp
		}
	}
	f.randomness = append(abi.PoStRandomness{}, rest[:32]...)
	copy(f.prover[:], rest[32:64])
	if k := le.Uint64(rest[64:]); k != math.MaxUint64 {
		f.partition = &k
	}
	count, rest := le.Uint64(rest[72:]), rest[80:]
	for i := uint64(0); i < count; i++ {
		l := le.Uint64(rest)
		f.vanilla, rest = append(f.vanilla, rest[8:8+l]), rest[8+l:]
	}
	if f.proofType < 0 {
		t.Fatalf("the fixture's proof %s is not in the table", name)
	}
	if id, _ := proverID(fixtureMiner); id != f.prover {
		t.Fatalf("the fixture's prover id %x is not f01000's", f.prover)
	}
	return f
}

// decodeUpdate is the SnapDeals fixture's fields, as filecoin-ffi's caller
// has them.
func decodeUpdate(t testing.TB, b []byte) (oldSealed, newSealed, unsealed cid.Cid, vanilla [][]byte) {
	t.Helper()
	le := binary.LittleEndian
	rest := b[16+int(le.Uint32(b[12:])):]
	var rOld, rNew, dNew [32]byte
	copy(rOld[:], rest)
	copy(rNew[:], rest[32:])
	copy(dNew[:], rest[64:])
	count, rest := le.Uint64(rest[96:]), rest[104:]
	for i := uint64(0); i < count; i++ {
		l := le.Uint64(rest)
		vanilla, rest = append(vanilla, rest[8:8+l]), rest[8+l:]
	}
	return sealedCID(t, rOld), sealedCID(t, rNew), unsealedCID(t, dNew), vanilla
}

var useFixtures sync.Once

// UseFixtures configures the default prover for the fixtures (once per test
// binary: the examples use it too).
func UseFixtures(t testing.TB) {
	cache := testParams(t)
	useFixtures.Do(func() {
		if err := Configure(Config{Backend: cuzk.CPU, Engine: cuzk.EngineConfig{CPUOnly: true}, ParamsDir: cache}); err != nil {
			t.Fatal(err)
		}
	})
}
