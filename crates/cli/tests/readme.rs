//! The README's worked example comes from the current build: every `console` block of
//! README.md whose command is `headway simulate` (deterministic: same inputs, same output)
//! is run from the repository's root and its output compared with the block, line by line.

use std::path::Path;
use std::process::Command;

#[test]
fn readme_simulate_examples_print_what_the_build_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let mut blocks = 0;
    let mut lines = readme.lines();
    while let Some(l) = lines.next() {
        if l.trim() != "```console" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let Some(cmd) = block.first().and_then(|c| c.strip_prefix("$ headway simulate ")) else { continue };
        let args: Vec<&str> = std::iter::once("simulate").chain(cmd.split_whitespace()).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_headway"))
            .args(&args)
            .current_dir(&root)
            .output()
            .expect("headway runs");
        assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
        let printed = String::from_utf8_lossy(&out.stdout);
        let printed: Vec<&str> = printed.lines().collect();
        assert_eq!(printed, block[1..], "README's `headway simulate {cmd}` is not what this build prints");
        blocks += 1;
    }
    assert!(blocks >= 1, "no `headway simulate` example in README.md");
}
