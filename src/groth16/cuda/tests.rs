//! The CUDA backend against the CPU backend and blstrs, on a GPU.

use std::collections::HashMap;
use std::sync::Arc;

use bellperson::groth16::Proof;
use blstrs::{Bls12, Scalar};
use ff::Field;

use super::device_matrices;
use super::pieces::{in_pieces, piece_of, window_bits, MIN_PIECE, WIDE_ABOVE};
use super::resident::{evict_unloaded, place, placement, resident_queries, RESIDENT};
use super::working_set::{msm_scratch, sppark_scratch, wide_scratch, working_set, G1_BUCKET, G2_BUCKET};
use crate::circuits::{Family, Synthetic};
use crate::gpu::{self, Csr, DeviceMatrices, DeviceScalars, ResidentG1, Scalars, SharingPolicy, Urgency};
use crate::groth16::{prove, Backend};
use crate::params::dummy_params;
use crate::pce::{evaluate, extract, Pce};
use crate::witness::{Witness, WitnessBuffer};

/// The default policy, as an engine has it.
fn policy() -> SharingPolicy {
    SharingPolicy::default()
}

/// Proofs from four threads at once on one device (shared streams, staging ring,
/// interleaved MSMs; two of the threads' proofs critical, on the express lane) equal the
/// serial GPU proof and the CPU one.
#[test]
fn concurrent_proofs_match_serial_and_cpu() {
    if gpu::device_count() == 0 {
        eprintln!("concurrent_proofs_match_serial_and_cpu: skipped, no CUDA device");
        return;
    }
    let circuit = Synthetic::new(Family::Sha256Chain, 1 << 16, 3);
    let pce = extract(circuit.blank()).unwrap();
    let params = dummy_params(&pce, 7);
    let w = Witness::generate_sized(circuit, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
    let (r, s) = (Scalar::from(5u64), Scalar::from(9u64));
    let on = |backend, urgency| prove(backend, urgency, &policy(), &pce, &w, None, &params, (r, s)).unwrap().0;
    let one = |urgency| on(Backend::Cuda(0), urgency);
    let want = one(Urgency::Throughput);
    let cpu = on(Backend::Cpu, Urgency::Throughput);
    assert!(want == cpu, "GPU proof differs from the CPU backend's");
    assert!(one(Urgency::Critical) == want, "the express lane's proof differs");
    let got: Vec<Proof<Bls12>> = std::thread::scope(|sc| {
        let threads: Vec<_> = [Urgency::Throughput, Urgency::Critical, Urgency::Throughput, Urgency::Critical]
            .map(|u| sc.spawn(move || (0..3).map(|_| one(u)).collect::<Vec<_>>()))
            .into_iter()
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(got.len(), 12);
    assert!(got.iter().all(|p| *p == want), "a concurrent proof differs");
}

/// An MSM cut into pieces of any size (device scalars from an offset, host scalars, a
/// sub-range of the bases) sums to the whole; scalars fewer or more than the bases are an
/// error.
#[test]
fn msm_in_pieces_equals_the_whole() {
    if gpu::device_count() == 0 {
        eprintln!("msm_in_pieces_equals_the_whole: skipped, no CUDA device");
        return;
    }
    let pce = extract(Synthetic::new(Family::MimcChain, 5000, 1).blank()).unwrap();
    let params = dummy_params(&pce, 3);
    let n = params.h.len();
    let bases = ResidentG1::new(0, &params.h).unwrap();
    let s: Vec<Scalar> = (0..n as u64).map(|i| Scalar::from(i * 7919 + 3)).collect();
    let d = DeviceScalars::upload(0, Urgency::Throughput, &s).unwrap();
    let whole = bases.msm(0..n, &d).unwrap();
    let tail = bases.msm(10..n, &s[10..]).unwrap();
    let turn = gpu::Turn::begin(0, Urgency::Throughput, policy().max_yield);
    for piece in [777, 4096, n - 1, n, usize::MAX] {
        let cut =
            in_pieces(&turn, &policy(), piece, 0..n, (&d).into(), |r, s, w| Ok(bases.msm_piece(r, s, w)?)).unwrap();
        assert_eq!(cut, whole, "device scalars in pieces of {piece}");
        let cut =
            in_pieces(&turn, &policy(), piece, 10..n, Scalars::Host(&s[10..]), |r, s, w| Ok(bases.msm_piece(r, s, w)?))
                .unwrap();
        assert_eq!(cut, tail, "host scalars in pieces of {piece}");
    }
    for wrong in [&s[1..], &s[..n - 1]] {
        assert!(in_pieces(&turn, &policy(), 1000, 1..n, Scalars::Host(wrong), |r, s, _| Ok(bases.msm(r, s)?)).is_ok());
        assert!(in_pieces(&turn, &policy(), 1000, 0..n, Scalars::Host(wrong), |r, s, _| Ok(bases.msm(r, s)?)).is_err());
    }
    let long = Scalars::Host(&s);
    assert!(
        in_pieces(&turn, &policy(), 1000, 1..n, long, |r, s, _| Ok(bases.msm(r, s)?)).is_err(),
        "more scalars than bases"
    );
}

/// Throughput MSMs are cut from 2^23 points on, in halves of at most the longest piece.
#[test]
fn pieces_are_halves_between_the_bounds() {
    for (n, want) in [(1000, MIN_PIECE), (1 << 23, 1 << 23), ((1 << 23) + 1, 1 << 23), (1 << 24, 1 << 23)] {
        assert_eq!(piece_of(n, &policy()), want, "n = {n}");
    }
    assert_eq!(piece_of(3 << 23, &policy()), 3 << 22);
    assert_eq!(piece_of(1 << 26, &policy()), 1 << 25);
    assert_eq!(piece_of(1 << 27, &policy()), 1 << 26);
    assert_eq!(piece_of(1 << 28, &policy()), 1 << 26);
}

/// The resident queries are the set of the most bytes within the room, ties keeping the
/// earlier queries; empty queries are always "resident".
#[test]
fn the_most_bytes_stay_resident() {
    let (t, f) = (true, false);
    let bytes = [13, 13, 10, 10, 26];
    assert_eq!(resident_queries(bytes, 72), [t; 5]);
    assert_eq!(resident_queries(bytes, u64::MAX), [t; 5]);
    assert_eq!(resident_queries(bytes, 71), [t, t, t, f, t], "62 B: A before B G1");
    assert_eq!(resident_queries(bytes, 40), [t, f, f, f, t], "39 B: H before L");
    assert_eq!(resident_queries(bytes, 36), [t, t, t, f, f], "36 B: H, L, A before A, B G2");
    assert_eq!(resident_queries(bytes, 9), [f; 5]);
    assert_eq!(resident_queries([0, 5, 0, 5, 0], 0), [t, f, t, f, t]);
}

/// Proofs whose queries are partly resident and partly streamed from the host (a card too
/// small for the whole SRS) equal the CPU backend's, on both lanes, for two complementary
/// sets of resident queries.
#[test]
fn partly_resident_queries_prove_the_same() {
    if gpu::device_count() == 0 {
        eprintln!("partly_resident_queries_prove_the_same: skipped, no CUDA device");
        return;
    }
    let circuit = Synthetic::new(Family::Sha256Chain, 1 << 14, 2);
    let pce = extract(circuit.blank()).unwrap();
    let w = Witness::generate_sized(circuit, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
    let (r, s) = (Scalar::from(3u64), Scalar::from(11u64));
    let (t, f) = (true, false);
    for keep in [[t, f, t, f, t], [f, t, f, t, f]] {
        let params = dummy_params(&pce, 5);
        let placed = Arc::new(place(0, &params, keep).unwrap());
        let key = (0u32, Arc::as_ptr(&params.h) as usize);
        let mut cache = RESIDENT.lock().unwrap();
        cache.get_or_insert_with(HashMap::new).insert(key, (Arc::downgrade(&params.h), placed.clone()));
        drop(cache);
        let on = |backend, urgency| prove(backend, urgency, &policy(), &pce, &w, None, &params, (r, s)).unwrap().0;
        let cpu = on(Backend::Cpu, Urgency::Throughput);
        for urgency in [Urgency::Throughput, Urgency::Critical] {
            assert!(on(Backend::Cuda(0), urgency) == cpu, "{keep:?} resident, {urgency:?}: the proof differs");
        }
        assert!(
            Arc::ptr_eq(&placed, &placement(0, &pce, &params, &policy()).unwrap()),
            "the proofs used this placement"
        );
    }
}

/// MSMs of more than 2^17 points take cuzk's driver at a window that grows with them,
/// shorter ones sppark's; the working set counts the driver's scratch with G2's buckets,
/// the larger.
#[test]
fn long_msms_take_the_wide_window() {
    assert_eq!(window_bits(WIDE_ABOVE, &policy()), 0);
    let forced = SharingPolicy { window_bits: Some(16), ..policy() };
    assert_eq!((window_bits(WIDE_ABOVE, &forced), window_bits(1 << 27, &forced)), (16, 16));
    let bits = [(WIDE_ABOVE + 1, 13), (1 << 19, 13), (1 << 20, 13), (1 << 21, 16), (1 << 23, 16)];
    for (n, want) in bits.into_iter().chain([((1 << 24) - 1, 20), (1 << 27, 20)]) {
        assert_eq!(window_bits(n, &policy()), want, "2^{:.2}", (n as f64).log2());
        let g2 = wide_scratch(n, want, G2_BUCKET);
        assert!(g2 > wide_scratch(n, want, G1_BUCKET) && msm_scratch(n, &policy()) >= g2, "2^{}", n.ilog2());
    }
    // A 13-bit window's levels: 2^8 segments per window.
    let wins = 254 / 13 + 1;
    let scratch = (wins << 12) * (G2_BUCKET + 4) + wins * (2 * 256 + 4 * 256) * G2_BUCKET;
    assert_eq!(
        wide_scratch(1 << 19, 13, G2_BUCKET),
        scratch + wins * (1 << 19) * 4 + wins * (1 << 11) * G2_BUCKET + (16 << 19) + (1 << 20)
    );
    assert_eq!(
        msm_scratch(WIDE_ABOVE, &policy()),
        WIDE_ABOVE as u64 / 4 + 128 * (WIDE_ABOVE as u64 / 8) + sppark_scratch(WIDE_ABOVE)
    );
}

/// A proof's device buffers at their peak (the pool's high-water mark, one proof at a
/// time, both lanes) fit the working set the device room reserves for it, on both
/// families: the bit-valued aux of sha256-chain and the dense aux of mimc-chain.
#[test]
fn a_proofs_device_buffers_fit_its_working_set() {
    if gpu::device_count() == 0 {
        eprintln!("a_proofs_device_buffers_fit_its_working_set: skipped, no CUDA device");
        return;
    }
    let mut over = Vec::new();
    for family in [Family::Sha256Chain, Family::MimcChain] {
        for lg in [16, 20] {
            let circuit = Synthetic::new(family, 1 << lg, 1);
            let pce = extract(circuit.blank()).unwrap();
            let params = dummy_params(&pce, 3);
            let w = Witness::generate_sized(circuit, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
            let estimate = working_set(&pce, &policy());
            for urgency in [Urgency::Throughput, Urgency::Critical] {
                let prove =
                    || prove(Backend::Cuda(0), urgency, &policy(), &pce, &w, None, &params, (Scalar::ONE, Scalar::ONE));
                prove().unwrap();
                gpu::pool_peak(0, true).unwrap();
                prove().unwrap();
                let peak = gpu::pool_peak(0, false).unwrap();
                let case = format!("{family:?} 2^{lg} {urgency:?}: {peak} B at most, {estimate} B reserved");
                eprintln!("{case} ({:.2})", peak as f64 / estimate as f64);
                if peak > estimate {
                    over.push(case);
                }
            }
        }
    }
    assert!(over.is_empty(), "proofs over their working set: {over:?}");
}

/// a, b, c evaluated on the device equal the CPU's SpMV bit for bit, zero past the rows,
/// on every circuit family (the synthetic ones and a real 2 KiB PoRep partition); the
/// first unsatisfied row is the CPU check's; the PCE's device copy is made once and
/// dropped with it (or when unused).
#[test]
fn device_spmv_matches_the_host() {
    if gpu::device_count() == 0 {
        eprintln!("device_spmv_matches_the_host: skipped, no CUDA device");
        return;
    }
    for family in Family::ALL {
        for size in [1000, 1 << 14] {
            let circuit = Synthetic::new(family, size, 5);
            let pce = extract(circuit.blank()).unwrap();
            let w = Witness::generate_sized(circuit, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
            device_spmv_matches(&pce, w, &format!("{family:?} {size}"));
        }
    }
    #[cfg(feature = "porep")]
    {
        use crate::circuits::porep::{self, PorepSize};
        use crate::circuits::Circuit;
        use crate::circuits::WitnessSource;
        let dir = std::env::temp_dir().join(format!("cuzk-spmv-porep-{}", std::process::id()));
        let c1 = crate::oracles::porep::make_c1(PorepSize::KiB2, porep::SealVariant::Interactive, &dir, 7)
            .map(|c1| c1.bytes)
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let statement = Circuit::Porep(PorepSize::KiB2).statement(0, &c1).unwrap();
        let pce = porep::extract_pce(PorepSize::KiB2).unwrap();
        let w = statement.instance(0).unwrap().witness(&pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
        device_spmv_matches(&pce, w, "PoRep 2 KiB");
    }
}

fn device_spmv_matches(pce: &Pce, mut w: Witness, what: &str) {
    let lg = pce.domain_size().trailing_zeros();
    let m = device_matrices(0, pce).unwrap();
    assert!(Arc::ptr_eq(&m, &device_matrices(0, pce).unwrap()), "uploaded once");
    let on_device = |w: &Witness, lane| {
        let (inputs, aux) =
            (DeviceScalars::upload(0, lane, &w.inputs).unwrap(), DeviceScalars::upload(0, lane, &w.aux).unwrap());
        let (abc, unsat) = m.eval(&inputs, &aux, lg).unwrap();
        (abc.map(|v| v.to_host().unwrap()), unsat)
    };
    let host = evaluate(pce, &w).unwrap();
    for lane in [Urgency::Throughput, Urgency::Critical] {
        let ([a, b, c], unsat) = on_device(&w, lane);
        assert_eq!(unsat, None, "{what}");
        for (got, want) in [(a, &host.a), (b, &host.b), (c, &host.c)] {
            assert_eq!(got.len(), pce.domain_size());
            assert!(got[..want.len()] == want[..], "{what} ({lane:?}): a device product differs");
            assert!(got[want.len()..].iter().all(|x| *x == Scalar::ZERO), "{what}: padding");
        }
    }
    // A wrong aux value: both sides name the same first broken row.
    w.aux[pce.num_aux / 2] += Scalar::from(3u64);
    let want = match crate::pce::check_satisfied(&evaluate(pce, &w).unwrap()) {
        Err(crate::Error::Unsatisfied { constraint }) => constraint,
        other => panic!("{what}: the host check says {other:?}"),
    };
    assert_eq!(on_device(&w, Urgency::Critical).1, Some(want), "{what}");
    drop(m);
    assert_eq!(pce.device_copies.drop_unused(), 1);
}

/// Matrices whose words name a column or dictionary entry out of range (a PCE changed
/// under a mapping) fail the product with an error; the device stays usable.
#[test]
fn out_of_range_words_fail_the_product_not_the_device() {
    if gpu::device_count() == 0 {
        eprintln!("out_of_range_words_fail_the_product_not_the_device: skipped, no CUDA device");
        return;
    }
    let row_ptr = [0u32, 1, 3];
    let dict = [Scalar::from(5u64)];
    let inputs = DeviceScalars::upload(0, Urgency::Throughput, &[Scalar::ONE]).unwrap();
    let aux = DeviceScalars::upload(0, Urgency::Throughput, &[Scalar::from(2u64), Scalar::from(4u64)]).unwrap();
    let eval = |words: &[u32], row_ptr: &[u32]| {
        let m = Csr { row_ptr, words };
        DeviceMatrices::new(0, [m, m, m], &dict, 1, 3).and_then(|d| d.eval(&inputs, &aux, 1))
    };
    let tag = |t: u32, col: u32| t << crate::pce::matrix::COL_BITS | col;
    let valid = (vec![tag(0, 0), tag(0, 1), tag(2, 2), 0], vec![0u32, 1, 4]);
    // 1·z0 ; z1 + 5·z2 = 2 + 20 = 22 (in each of a, b, c; the product check fails row 1).
    let (abc, unsat) = eval(&valid.0, &valid.1).unwrap();
    assert_eq!(abc[0].to_host().unwrap(), [Scalar::ONE, Scalar::from(22u64)]);
    assert_eq!(unsat, Some(1));
    for (words, row_ptr) in [
        (vec![tag(0, 0), tag(0, 3), tag(0, 1)], row_ptr.to_vec()), // column 3 of 3
        (vec![tag(0, 0), tag(2, 1), 1], row_ptr.to_vec()),         // dictionary entry 1 of 1
        (vec![tag(0, 0), tag(3, 1), tag(0, 1)], row_ptr.to_vec()), // tag 3
        (vec![tag(0, 0), tag(0, 1), tag(2, 2)], row_ptr.to_vec()), // dictionary index cut off
        (vec![tag(0, 0), tag(0, 1), tag(0, 1)], vec![0, 1, 9]),    // row past the words
        (vec![tag(0, 0), tag(0, 1), tag(0, 1)], vec![0, 2, 1]),    // rows backwards
    ] {
        let e = eval(&words, &row_ptr).err().expect("refused");
        assert!(e.message.contains("out of range"), "{e}");
    }
    assert!(eval(&valid.0, &valid.1).is_ok(), "the device still works");

    // Row 1 long enough for a warp (spmv_long_rows): 31·z1, then 5·z2 across the lanes' first
    // round of 32 words and the next, then −4·z1: 62 + 20 − 8 = 74.
    let long = |dict_pair: [u32; 2], last: u32| {
        let mut words = vec![tag(0, 0)];
        words.extend([tag(0, 1); 31]);
        words.extend(dict_pair);
        words.extend([tag(1, 1), tag(1, 1), tag(1, 1), last]);
        let row_ptr = vec![0, 1, words.len() as u32];
        (words, row_ptr)
    };
    let (words, row_ptr) = long([tag(2, 2), 0], tag(1, 1));
    let (abc, _) = eval(&words, &row_ptr).unwrap();
    assert_eq!(abc[2].to_host().unwrap(), [Scalar::ONE, Scalar::from(74u64)], "a long row");
    for (words, row_ptr) in [
        long([tag(2, 2), 1], tag(1, 1)),                     // dictionary entry 1 of 1
        long([tag(2, 3), 0], tag(1, 1)),                     // column 3 of 3
        long([tag(2, 2), 0], tag(3, 1)),                     // tag 3
        long([tag(2, 2), tag(2, 2)], tag(1, 1)),             // a tag word as the dictionary index
        long([tag(2, 2), 0], tag(2, 1)),                     // dictionary index cut off
        (long([tag(2, 2), 0], tag(1, 1)).0, vec![0, 40, 1]), // rows backwards
    ] {
        let e = eval(&words, &row_ptr).err().expect("refused");
        assert!(e.message.contains("out of range"), "{e}");
    }
    assert!(eval(&valid.0, &valid.1).is_ok(), "the device still works");
}

/// The device copies of parameters stay while anyone holds them, and go
/// at the next `evict_unloaded` once nobody does.
#[test]
fn prepared_device_copies_freed_once_params_dropped() {
    if gpu::device_count() == 0 {
        eprintln!("prepared_device_copies_freed_once_params_dropped: skipped, no CUDA device");
        return;
    }
    let circuit = Synthetic::new(Family::Sha256Chain, 1 << 12, 1);
    let pce = extract(circuit.blank()).unwrap();
    let params = dummy_params(&pce, 3);
    // Pins the address the cache is keyed by, so no other test's
    // parameters can take it once these are dropped.
    let h = Arc::downgrade(&params.h);
    let key = (0u32, h.as_ptr() as usize);
    let cached = || RESIDENT.lock().unwrap().as_ref().is_some_and(|c| c.contains_key(&key));
    assert!(!cached());
    crate::groth16::prepare(Backend::Cuda(0), &pce, &params, &policy()).unwrap();
    assert!(cached(), "prepare uploads the parameters");
    let placed = placement(0, &pce, &params, &policy()).unwrap();
    assert!(!placed.streams(), "a small SRS is resident");
    drop(placed);
    assert!(cached());
    evict_unloaded();
    assert!(cached(), "evicted while the parameters are alive");
    drop(params);
    assert_eq!(h.strong_count(), 0);
    evict_unloaded();
    assert!(!cached(), "device copies outlived their parameters");
}
