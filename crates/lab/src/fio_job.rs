//! A headway fio job file, made into the one real fio runs in the guest.
//!
//! `headway simulate` maps a job onto the whole modelled disk and reads `headway_*` options
//! real fio does not know. In the guest the same file must name where to do its I/O and
//! carry only fio's options, so:
//! * every `headway_*` option is dropped (and listed, so the report can say which);
//! * `filename` and `directory` are dropped (the lab decides where the I/O goes) and the
//!   `[global]` section gets `filename=/dev/vdX[:/dev/vdY]` on a raw disk, or
//!   `directory=/mnt/hw0[:/mnt/hw1]` in a file system; a file without `[global]` gets one;
//! * everything else, comments included, is kept line for line.

/// The guest's job file and the options dropped from it (`line: key`).
#[derive(Debug, PartialEq)]
pub struct GuestJob {
    pub text: String,
    pub dropped: Vec<String>,
}

/// Where the job's I/O goes in the guest.
pub enum Target<'a> {
    /// Block devices (`/dev/vdc`).
    Raw(&'a [String]),
    /// Mount points (`/mnt/hw0`).
    Dirs(&'a [String]),
}

pub fn for_guest(job: &str, target: Target<'_>) -> GuestJob {
    let inject = match target {
        Target::Raw(devs) => format!("filename={}", devs.join(":")),
        Target::Dirs(dirs) => format!("directory={}", dirs.join(":")),
    };
    let mut out = String::new();
    let mut dropped = Vec::new();
    let mut saw_global = false;
    for (i, line) in job.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            out.push_str(line);
            out.push('\n');
            if t.eq_ignore_ascii_case("[global]") && !saw_global {
                saw_global = true;
                out.push_str(&inject);
                out.push('\n');
            }
            continue;
        }
        if t.starts_with(';') || t.starts_with('#') || t.is_empty() {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let key = t.split('=').next().unwrap_or("").trim().to_ascii_lowercase();
        if key.starts_with("headway_") || key == "filename" || key == "directory" {
            dropped.push(format!("{}: {key}", i + 1));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if !saw_global {
        out = format!("[global]\n{inject}\n\n{out}");
    }
    GuestJob { text: out, dropped }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_gets_the_target_and_headway_options_go() {
        let job = "; par-read\n[global]\nrw=read\nheadway_stride=4\nfilename=/x\n\n[r]\nnumjobs=4\nheadway_rate=5\n";
        let g = for_guest(job, Target::Raw(&["/dev/vdc".into()]));
        assert_eq!(g.text, "; par-read\n[global]\nfilename=/dev/vdc\nrw=read\n\n[r]\nnumjobs=4\n");
        assert_eq!(g.dropped, vec!["4: headway_stride", "5: filename", "9: headway_rate"]);
    }

    #[test]
    fn a_file_without_global_gets_one() {
        let g = for_guest("[a]\nrw=randread\n", Target::Dirs(&["/mnt/hw0".into(), "/mnt/hw1".into()]));
        assert_eq!(g.text, "[global]\ndirectory=/mnt/hw0:/mnt/hw1\n\n[a]\nrw=randread\n");
        assert!(g.dropped.is_empty());
    }
}
