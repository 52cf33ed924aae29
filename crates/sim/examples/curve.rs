//! Print the fitted service-time curve of a drive (a built-in name or a DiskSim parameter
//! file, as `--disk` takes it; default the default drive): `cargo run --example curve -- NAME`.
fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| headway_disk::DEFAULT.into());
    let disk = headway_disk::resolve(&name).unwrap_or_else(|e| panic!("{e}"));
    let curve = headway_sim::calibrate::curve_for(&disk);
    println!("distance_sectors\tforward_ms\tbackward_ms");
    for d in [0u64, 8, 24, 128, 1024, 8192, 65536, 286_720, 1 << 21, 1 << 24, 104_857_600, 500_000_000] {
        println!(
            "{d}\t{:.3}\t{:.3}",
            curve.estimate(0, d).as_millis_f64(),
            curve.estimate(d, 0).as_millis_f64()
        );
    }
}
