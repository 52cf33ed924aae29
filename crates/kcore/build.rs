//! Builds the kernel elevator's core (`kernel/stream_core.c`, no kernel headers) and the
//! harness's shim for userspace, with the warnings the kernel build would show as errors;
//! and a second time as the mutant (`c/mutant.h`: `SS_BACKWARD_PCT` 60 instead of 50, every
//! name prefixed `mut_`), which the harness must tell from the model.

fn build(name: &str, mutant: bool) {
    let kernel = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel");
    let mut b = cc::Build::new();
    b.file(kernel.join("stream_core.c"))
        .file("c/shim.c")
        .include(&kernel)
        .flag("-std=gnu11")
        .flag("-Wall")
        .flag("-Wextra")
        .flag("-Wno-unused-parameter")
        .warnings_into_errors(true);
    if mutant {
        b.flag("-include").flag("c/mutant.h").define("SS_BACKWARD_PCT", "60");
    }
    b.compile(name);
}

fn main() {
    for f in ["../../kernel/stream_core.c", "../../kernel/stream_core.h", "c/shim.c", "c/mutant.h"] {
        println!("cargo:rerun-if-changed={f}");
    }
    build("streamcore", false);
    build("streamcore_mutant", true);
}
