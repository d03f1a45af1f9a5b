//! Compiles `cuda/*.cu` into the crate when the `cuda` feature is on.
//! A default (CPU-only) build does nothing here and needs no nvcc.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "cuda")]
    cuda::build();
}

#[cfg(feature = "cuda")]
mod cuda {
    use std::path::PathBuf;

    pub fn build() {
        println!("cargo:rerun-if-changed=cuda");
        println!("cargo:rerun-if-env-changed=NVCC");
        println!("cargo:rerun-if-env-changed=PATH");
        if !nvcc_found() {
            eprintln!(
                "error: the `cuda` feature needs nvcc: put it on PATH (or name it in NVCC), \
                 e.g. `source scripts/cuda-env.sh`, which finds or installs one"
            );
            std::process::exit(1);
        }

        let mut files: Vec<PathBuf> = std::fs::read_dir("cuda")
            .expect("cuda/ directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cu"))
            .collect();
        files.sort();
        for f in &files {
            println!("cargo:rerun-if-changed={}", f.display());
        }

        // sppark's defaults (sm_75/sm_80/sm_120 + compute_100 PTX) never
        // include Hopper; without sm_90a an H100/H200 would JIT compute_80 PTX.
        let mut nvcc = sppark::build::ccmd();
        nvcc.flag("-gencode").flag("arch=compute_90a,code=sm_90a");
        nvcc.define("FEATURE_BLS12_381", None);
        // The host half of sppark's fields is blst's C++ (blst_t.hpp): it must
        // be built with the same ISA choice as the blst crate's own build.rs,
        // which enables ADX when the build host has it.
        if adx() {
            nvcc.define("__ADX__", None);
        } else {
            nvcc.define("__BLST_PORTABLE__", None);
        }
        nvcc.flag("-Xcompiler").flag("-Wno-subobject-linkage");
        nvcc.include("cuda");
        nvcc.files(&files);
        nvcc.compile("cuzk_cuda");
    }

    /// Whether the build will find an nvcc: `$NVCC` (a path, or a name on PATH), else `nvcc` on
    /// PATH, as sppark and cc look for it.
    fn nvcc_found() -> bool {
        let name = std::env::var_os("NVCC").map_or_else(|| PathBuf::from("nvcc"), PathBuf::from);
        name.is_file()
            || std::env::var_os("PATH")
                .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(&name).is_file()))
    }

    fn adx() -> bool {
        let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
        if arch != "x86_64" {
            return false;
        }
        let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
        if features.split(',').any(|f| f == "adx") {
            return true;
        }
        #[cfg(target_arch = "x86_64")]
        {
            std::is_x86_feature_detected!("adx")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }
}
