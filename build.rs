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
        let Some(nvcc) = nvcc() else {
            eprintln!(
                "error: the `cuda` feature needs nvcc: put it on PATH (or name it in NVCC), \
                 e.g. `source scripts/cuda-env.sh`, which finds or installs one"
            );
            std::process::exit(1);
        };
        // The CUDA runtime sppark links (libcudart_static.a) lies beside nvcc's bin/: in lib64
        // in NVIDIA's toolkit, lib in the PyPI wheel, a multiarch folder in a distribution's
        // package. Said here rather than in RUSTFLAGS, so that cuda builds share their
        // dependencies' artifacts with CPU builds.
        let home = nvcc.parent().and_then(|bin| bin.parent()).map(PathBuf::from).unwrap_or_default();
        let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
        let libs = [
            home.join("lib64"),
            home.join("lib"),
            home.join(format!("targets/{arch}-linux/lib")),
            home.join(format!("lib/{arch}-linux-gnu")),
        ];
        match libs.iter().find(|d| d.join("libcudart_static.a").is_file()) {
            Some(dir) => println!("cargo:rustc-link-search=native={}", dir.display()),
            None => println!("cargo:warning=no libcudart_static.a beside {}: linking may fail", nvcc.display()),
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

    /// The nvcc the build will use: `$NVCC` (a path, or a name on PATH), else `nvcc` on PATH, as
    /// sppark and cc look for it; resolved through symbolic links.
    fn nvcc() -> Option<PathBuf> {
        let name = std::env::var_os("NVCC").map_or_else(|| PathBuf::from("nvcc"), PathBuf::from);
        let found = if name.is_file() {
            Some(name)
        } else {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path).map(|d| d.join(&name)).find(|p| p.is_file())
        };
        found.map(|p| std::fs::canonicalize(&p).unwrap_or(p))
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
