//! The `extern "C"` surface of `cuda/*.cu` — declared here and nowhere else.
//!
//! Points and scalars cross as raw pointers to blstrs values: `blstrs::Scalar`,
//! `G1Affine`, `G2Affine`, `G1Projective` and `G2Projective` are
//! `repr(transparent)` over blst's `blst_fr`, `blst_p1_affine`,
//! `blst_p2_affine`, `blst_p1` and `blst_p2`, i.e. little-endian u64 limbs in
//! Montgomery form, affine infinity = (0, 0), projective = Jacobian with
//! Z = 0 at infinity. Those are exactly sppark's host `fr_t`, `Affine_t<fp_t>`,
//! `Affine_t<fp2_t>`, `jacobian_t<fp_t>` and `jacobian_t<fp2_t>`, so nothing is
//! re-encoded; the asserts below pin the sizes and alignments this relies on.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use std::ffi::c_void;
use std::mem::{align_of, size_of};

const _: () = {
    assert!(size_of::<Scalar>() == 32 && align_of::<Scalar>() == 8);
    assert!(size_of::<G1Affine>() == 96 && align_of::<G1Affine>() == 8);
    assert!(size_of::<G2Affine>() == 192 && align_of::<G2Affine>() == 8);
    assert!(size_of::<G1Projective>() == 144 && align_of::<G1Projective>() == 8);
    assert!(size_of::<G2Projective>() == 288 && align_of::<G2Projective>() == 8);
    assert!(size_of::<blst::blst_fr>() == 32);
    assert!(size_of::<blst::blst_p1_affine>() == 96 && size_of::<blst::blst_p1>() == 144);
    assert!(size_of::<blst::blst_p2_affine>() == 192 && size_of::<blst::blst_p2>() == 288);
};

/// Mirrors `cuzk_gpu_info_t` in cuda/device.cu.
#[repr(C)]
pub(crate) struct GpuInfoC {
    pub cuda_id: i32,
    pub sm_count: i32,
    pub major: i32,
    pub minor: i32,
    pub total_bytes: usize,
    pub free_bytes: usize,
    pub name: [u8; 256],
}

/// `fr_bits_t` in cuda/common.cuh: a field element passed to a kernel by value.
pub(crate) type FrBits = [u64; 4];

extern "C" {
    pub(crate) fn cuzk_gpu_count(out: *mut usize, count_err: *mut i32, prohibited: *mut i32) -> sppark::Error;
    pub(crate) fn cuzk_gpu_info(device_id: i32, out: *mut GpuInfoC) -> sppark::Error;

    pub(crate) fn cuzk_g1_bases_new(
        device_id: i32,
        points: *const G1Affine,
        n: usize,
        out: *mut *mut c_void,
    ) -> sppark::Error;
    pub(crate) fn cuzk_g2_bases_new(
        device_id: i32,
        points: *const G2Affine,
        n: usize,
        out: *mut *mut c_void,
    ) -> sppark::Error;
    pub(crate) fn cuzk_g1_bases_free(bases: *mut c_void);
    pub(crate) fn cuzk_g2_bases_free(bases: *mut c_void);
    pub(crate) fn cuzk_g1_msm_resident(
        bases: *const c_void,
        start: usize,
        n: usize,
        window_n: usize,
        wbits: u32,
        host_scalars: *const Scalar,
        dev_scalars: *const c_void,
        dev_start: usize,
        critical: *const u32,
        max_yield_us: u64,
        out: *mut G1Projective,
    ) -> sppark::Error;
    pub(crate) fn cuzk_g2_msm_resident(
        bases: *const c_void,
        start: usize,
        n: usize,
        window_n: usize,
        wbits: u32,
        host_scalars: *const Scalar,
        dev_scalars: *const c_void,
        dev_start: usize,
        critical: *const u32,
        max_yield_us: u64,
        out: *mut G2Projective,
    ) -> sppark::Error;
    pub(crate) fn cuzk_g1_msm_host(
        device_id: i32,
        points: *const G1Affine,
        n: usize,
        window_n: usize,
        wbits: u32,
        host_scalars: *const Scalar,
        dev_scalars: *const c_void,
        dev_start: usize,
        critical: *const u32,
        max_yield_us: u64,
        out: *mut G1Projective,
    ) -> sppark::Error;
    pub(crate) fn cuzk_g2_msm_host(
        device_id: i32,
        points: *const G2Affine,
        n: usize,
        window_n: usize,
        wbits: u32,
        host_scalars: *const Scalar,
        dev_scalars: *const c_void,
        dev_start: usize,
        critical: *const u32,
        max_yield_us: u64,
        out: *mut G2Projective,
    ) -> sppark::Error;

    pub(crate) fn cuzk_ntt_constants(lg_domain: u32, omega: *mut Scalar, coset_gen: *mut Scalar) -> sppark::Error;
    pub(crate) fn cuzk_compute_h(
        device_id: i32,
        a: *mut c_void,
        b: *mut c_void,
        c: *mut c_void,
        lg_domain: u32,
        z_inv: *const FrBits,
        out_len: usize,
        out: *mut *mut c_void,
    ) -> sppark::Error;

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_matrices_new(
        device_id: i32,
        row_ptr: *const *const u32,
        words: *const *const u32,
        nwords: *const usize,
        rows: usize,
        dict: *const Scalar,
        dict_len: usize,
        num_inputs: usize,
        num_cols: usize,
        out: *mut *mut c_void,
        nlong: *mut usize,
    ) -> sppark::Error;
    pub(crate) fn cuzk_matrices_free(m: *mut c_void);
    pub(crate) fn cuzk_matrices_eval(
        m: *const c_void,
        inputs: *const c_void,
        aux: *const c_void,
        lg_domain: u32,
        out: *mut *mut c_void,
        first_unsatisfied: *mut u64,
    ) -> sppark::Error;

    pub(crate) fn cuzk_staging_bytes(device_id: i32, lane: i32, out: *mut usize) -> sppark::Error;
    pub(crate) fn cuzk_gpu_trim(device_id: i32) -> sppark::Error;
    pub(crate) fn cuzk_gpu_room(device_id: i32, out: *mut usize) -> sppark::Error;
    pub(crate) fn cuzk_gpu_warm(device_id: i32, bytes: usize) -> sppark::Error;
    pub(crate) fn cuzk_gpu_pool_peak(device_id: i32, reset: bool, out: *mut usize) -> sppark::Error;
    pub(crate) fn cuzk_scalars_upload(
        device_id: i32,
        lane: i32,
        scalars: *const Scalar,
        n: usize,
        out: *mut *mut c_void,
    ) -> sppark::Error;
    pub(crate) fn cuzk_scalars_download(v: *const c_void, out: *mut Scalar, n: usize) -> sppark::Error;
    pub(crate) fn cuzk_scalars_select(
        v: *const c_void,
        words: *const u64,
        nwords: usize,
        out: *mut *mut c_void,
    ) -> sppark::Error;
    pub(crate) fn cuzk_scalars_free(v: *mut c_void);
    /// `out[i] = scalars[i]·P` for `i < n` (cuda/fixed_base.cu), `table` P's window table of
    /// `ceil(255 / window)·(2^window − 1)` points, the scalars canonical (not Montgomery).
    pub(crate) fn cuzk_g1_fixed_base(
        device_id: i32,
        out: *mut G1Affine,
        table: *const G1Affine,
        window: u32,
        scalars: *const FrBits,
        n: usize,
    ) -> sppark::Error;
    pub(crate) fn cuzk_g2_fixed_base(
        device_id: i32,
        out: *mut G2Affine,
        table: *const G2Affine,
        window: u32,
        scalars: *const FrBits,
        n: usize,
    ) -> sppark::Error;
}
