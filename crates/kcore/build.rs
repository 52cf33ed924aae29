//! Builds the kernel elevator's core (`kernel/stream_core.c`, no kernel headers) and the
//! harness's shim for userspace, with the warnings the kernel build would show as errors.

fn main() {
    let kernel = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel");
    println!("cargo:rerun-if-changed={}", kernel.join("stream_core.c").display());
    println!("cargo:rerun-if-changed={}", kernel.join("stream_core.h").display());
    println!("cargo:rerun-if-changed=c/shim.c");
    cc::Build::new()
        .file(kernel.join("stream_core.c"))
        .file("c/shim.c")
        .include(&kernel)
        .flag("-std=gnu11")
        .flag("-Wall")
        .flag("-Wextra")
        .flag("-Wno-unused-parameter")
        .warnings_into_errors(true)
        .compile("streamcore");
}
