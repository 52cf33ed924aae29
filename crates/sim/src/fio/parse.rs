//! Reading a job file: lines into sections, sections into [`JobSpec`]s.
//!
//! Two steps. [`lex`] turns text into sections of `key[=value]` entries, dropping comments
//! and blank lines and refusing what is not fio's ini syntax. Then the sections are applied
//! in order to a running `[global]` draft: a `[global]` section updates it, a job section
//! starts from a copy of it, so a job sees exactly the `[global]` sections above it (fio).

use std::path::Path;

use super::error::JobFileError;
use super::options::{self, Draft};
use super::spec::{JobFile, Origin};

/// Read and parse the job file at `path`; errors name it as given.
pub fn parse_file(path: &Path) -> Result<JobFile, JobFileError> {
    let label = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse_str(&text, &label),
        Err(source) => Err(JobFileError::Io { path: label, source }),
    }
}

/// Parse job-file text; `path_label` names it in errors and in [`JobFile::path`].
pub fn parse_str(text: &str, path_label: &str) -> Result<JobFile, JobFileError> {
    build(lex(text, path_label)?, path_label)
}

/// What fio's command line names in errors: `fio arguments:3` is the third argument.
pub const ARGS_LABEL: &str = "fio arguments";

/// fio's command line (`--name=job --rw=randread --bs=4k ...`) as a job file: options
/// before the first `--name` are `[global]`, each `--name=NAME` starts job `[NAME]` and the
/// options after it are the job's (as fio reads its command line). Errors name the
/// argument by its number ([`ARGS_LABEL`]`:N`).
pub fn parse_args(args: &[String]) -> Result<JobFile, JobFileError> {
    let syntax = |line, message: String| JobFileError::Syntax {
        at: Origin { file: ARGS_LABEL.to_string(), line },
        message,
    };
    let mut sections: Vec<Section> = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let line = i + 1;
        let body = arg
            .strip_prefix("--")
            .ok_or_else(|| syntax(line, format!("`{arg}` is not an option (--option or --option=value)")))?;
        let (key, value) = match body.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (body.trim(), None),
        };
        if key.is_empty() {
            return Err(syntax(line, format!("`{arg}` has no option name")));
        }
        if key == "name" {
            let name = value.filter(|v| !v.is_empty() && v != "global");
            let name = name.ok_or_else(|| syntax(line, "`--name` needs a job name (not global)".into()))?;
            sections.push(Section { name, line, entries: Vec::new() });
            continue;
        }
        if sections.is_empty() {
            sections.push(Section { name: "global".into(), line, entries: Vec::new() });
        }
        let section = sections.last_mut().expect("pushed above");
        section.entries.push(Entry { key: key.to_string(), value, line });
    }
    build(sections, ARGS_LABEL)
}

/// Sections into jobs: each job starts from the `[global]` sections above it.
fn build(sections: Vec<Section>, path_label: &str) -> Result<JobFile, JobFileError> {
    let mut global: Option<Draft> = None;
    let mut jobs = Vec::new();
    let mut global_options = Vec::new();
    for section in sections {
        let origin = Origin { file: path_label.to_string(), line: section.line };
        let global = global.get_or_insert_with(|| Draft::new(origin.clone()));
        if section.name == "global" {
            global.in_global = true;
            apply(global, &section.entries, path_label)?;
            global_options.extend(fio_options(&section.entries));
        } else {
            let mut job = global.clone();
            job.in_global = false;
            job.spec.name = section.name;
            job.spec.origin = origin;
            apply(&mut job, &section.entries, path_label)?;
            job.spec.report.options = fio_options(&section.entries);
            jobs.push(job.finish()?);
        }
    }
    if jobs.is_empty() {
        return Err(JobFileError::NoJobs { path: path_label.to_string() });
    }
    Ok(JobFile { path: path_label.to_string(), jobs, global_options })
}

/// A `[name]` header and the entries under it.
#[derive(Debug, PartialEq)]
struct Section {
    name: String,
    line: usize,
    entries: Vec<Entry>,
}

/// `key=value` (`value: Some`) or a bare `key` (`None`), both trimmed.
#[derive(Debug, PartialEq)]
struct Entry {
    key: String,
    value: Option<String>,
    line: usize,
}

/// The entries fio itself sees, as written: headway's own options (`headway_*`, usually
/// `; @headway` comments to fio) are not among them.
fn fio_options(entries: &[Entry]) -> Vec<(String, String)> {
    entries.iter().filter(|e| !e.key.starts_with("headway_")).map(Entry::as_written).collect()
}

impl Entry {
    /// `(key, value)` as written, `""` for a bare key (fio's `"job options"`).
    fn as_written(&self) -> (String, String) {
        (self.key.clone(), self.value.clone().unwrap_or_default())
    }
}

fn lex(text: &str, file: &str) -> Result<Vec<Section>, JobFileError> {
    let syntax =
        |line, message: String| JobFileError::Syntax { at: Origin { file: file.to_string(), line }, message };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        // `; @headway KEY=VALUE`: a headway option fio reads as a comment
        let annotated = headway_annotation(trimmed);
        if annotated.is_none() && (trimmed.is_empty() || trimmed.starts_with([';', '#'])) {
            continue;
        }
        let content = match annotated {
            Some(option) => option.map_err(|m| syntax(line, m))?,
            None => strip_trailing_comment(trimmed).to_owned(),
        };
        let content = content.as_str();
        if let Some(header) = content.strip_prefix('[') {
            let name = header
                .strip_suffix(']')
                .ok_or_else(|| syntax(line, format!("malformed section header `{content}`")))?
                .trim();
            if name.is_empty() {
                return Err(syntax(line, "empty section name `[]`".into()));
            }
            sections.push(Section { name: name.to_string(), line, entries: Vec::new() });
            continue;
        }
        if content == "include" || content.starts_with("include ") || content.starts_with("include\t") {
            return Err(syntax(
                line,
                "`include` is not supported: put the included options in this file".into(),
            ));
        }
        let (key, value) = match content.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (content, None),
        };
        if key.is_empty() {
            return Err(syntax(line, format!("`{content}` has no option name before `=`")));
        }
        let Some(section) = sections.last_mut() else {
            return Err(syntax(
                line,
                format!("option `{key}` comes before any [section] (start with [global] or [name])"),
            ));
        };
        section.entries.push(Entry { key: key.to_string(), value, line });
    }
    Ok(sections)
}

/// The marker of a headway option written as a comment (`; @headway weight=2`), so that
/// fio, which skips comment lines, accepts the same file.
pub const ANNOTATION: &str = "@headway";

/// `; @headway KEY[=VALUE]` (or `#`): the option line it carries, `headway_` prefixed when
/// the key is written without it (`weight=2` is `headway_weight=2`); `None` for any other
/// line. Only headway's own options may be written so (fio would not see the others).
fn headway_annotation(line: &str) -> Option<Result<String, String>> {
    let rest = line.strip_prefix([';', '#'])?.trim_start();
    let body = rest.strip_prefix(ANNOTATION)?;
    if !body.is_empty() && !body.starts_with(char::is_whitespace) {
        return None; // `@headwayish`: an ordinary comment
    }
    let body = strip_trailing_comment(body.trim());
    if body.is_empty() {
        return Some(Err(format!("`{ANNOTATION}` without an option (write `; {ANNOTATION} KEY=VALUE`)")));
    }
    let key = body.split('=').next().unwrap_or_default().trim();
    if key.is_empty() {
        return Some(Err(format!("`{body}` has no option name before `=`")));
    }
    if key.starts_with("headway_") {
        return Some(Ok(body.to_string()));
    }
    Some(Ok(format!("headway_{body}")))
}

/// `bs=4k ; comment` → `bs=4k`. A `;` or `#` starts a comment at the start of a line or
/// after whitespace; elsewhere it is part of the value (fio cuts at any `;` or `#`, which
/// would turn `bs=4k;x` into `4k` — here it stays and fails as a malformed size).
fn strip_trailing_comment(line: &str) -> &str {
    let mut prev_space = false;
    for (i, c) in line.char_indices() {
        if prev_space && (c == ';' || c == '#') {
            return line[..i].trim_end();
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// Apply a section's entries to `draft` in order, except that `kb_base` goes first: in fio
/// it is parsed before the other options of its section, wherever it is written.
fn apply(draft: &mut Draft, entries: &[Entry], file: &str) -> Result<(), JobFileError> {
    let (units, rest): (Vec<&Entry>, Vec<&Entry>) = entries.iter().partition(|e| e.key == "kb_base");
    for entry in units.into_iter().chain(rest) {
        let at = Origin { file: file.to_string(), line: entry.line };
        let Some((name, option)) = options::find(&entry.key) else {
            return Err(JobFileError::UnknownOption { at, option: entry.key.clone() });
        };
        let value = entry.value.as_deref();
        let result = match value.and_then(find_variable) {
            Some(var) => Err(format!(
                "`{var}`: headway does not expand variables ($VAR, ${{VAR}}, $pagesize, ...); \
                 write the value"
            )),
            None => (option.set)(draft, value),
        };
        if let Err(message) = result {
            return Err(JobFileError::Value { at, option: entry.key.clone(), message });
        }
        draft.set_at.insert(name, (at, entry.key.clone()));
    }
    Ok(())
}

/// The first `$NAME` or `${NAME}` in a value, as written.
fn find_variable(value: &str) -> Option<&str> {
    let start = value.find('$')?;
    let rest = &value[start + 1..];
    let len = if rest.starts_with('{') {
        rest.find('}').map_or(rest.len(), |end| end + 1)
    } else {
        rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len())
    };
    (len > 0).then(|| &value[start..start + 1 + len])
}

#[cfg(test)]
mod tests {
    #[test]
    fn fio_command_lines_are_job_files() {
        let args: Vec<String> = "--direct=1 --bs=8k --name=a --rw=randread --name=b --rw=write --numjobs=2"
            .split(' ')
            .map(String::from)
            .collect();
        let f = parse_args(&args).unwrap();
        let got: Vec<_> =
            f.jobs.iter().map(|j| (j.name.as_str(), j.pattern, j.bs_read, j.direct, j.numjobs)).collect();
        assert_eq!(
            got,
            vec![
                ("a", super::super::Pattern::RandRead, 8192, true, 1),
                ("b", super::super::Pattern::Write, 8192, true, 2)
            ]
        );
        // the same as the job file
        let text = "[global]\ndirect=1\nbs=8k\n[a]\nrw=randread\n[b]\nrw=write\nnumjobs=2\n";
        assert_eq!(
            f.jobs.iter().map(|j| &j.name).collect::<Vec<_>>(),
            parse_str(text, "x").unwrap().jobs.iter().map(|j| &j.name).collect::<Vec<_>>()
        );
        // errors name the argument
        let bad = |a: &str| {
            parse_args(&a.split(' ').map(String::from).collect::<Vec<_>>()).unwrap_err().to_string()
        };
        assert_eq!(
            bad("--name=a --bs=4q"),
            "fio arguments:2: option `bs`: malformed size `4q` (expected e.g. 4k, 1M, 512)"
        );
        assert_eq!(
            bad("--name=a rw=read"),
            "fio arguments:2: `rw=read` is not an option (--option or --option=value)"
        );
        assert!(bad("--bs=4k").contains("no job sections"));
        assert!(bad("--name= --rw=read").starts_with("fio arguments:1: `--name` needs a job name"));
        assert!(bad("--name=a --frobnicate").starts_with("fio arguments:2: unknown option `frobnicate`"));
    }

    use super::*;
    use crate::fio::{Engine, Pattern};
    use headway_sched::Duration;

    fn parse(text: &str) -> JobFile {
        parse_str(text, "t.fio").unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(text: &str) -> String {
        parse_str(text, "t.fio").expect_err(text).to_string()
    }

    /// The Stream Scheduling paper's par-read (000, Section 3.3), as in the brief.
    const PAR_READ: &str = "\
[global]
ioengine=psync
direct=1
rw=read
bs=4k
size=1g
thinktime=0
[par-read]
numjobs=4
offset_increment=51g
";

    #[test]
    fn par_read() {
        let f = parse(PAR_READ);
        assert_eq!(f.path, "t.fio");
        assert_eq!(f.jobs.len(), 1);
        let j = &f.jobs[0];
        assert_eq!(j.name, "par-read");
        assert_eq!(j.origin, Origin { file: "t.fio".into(), line: 8 });
        assert_eq!(j.engine, Engine::Sync);
        assert_eq!(j.iodepth, 1);
        assert!(j.direct);
        assert_eq!(j.pattern, Pattern::Read);
        assert_eq!((j.bs_read, j.bs_write), (4096, 4096));
        assert_eq!(j.size, Some(1 << 30));
        assert_eq!(j.thinktime, Duration::ZERO);
        assert_eq!(j.numjobs, 4);
        assert_eq!(j.offset, 0);
        assert_eq!(j.offset_increment, 51 << 30);
        assert_eq!(j.skip, 0);
        assert_eq!(j.strided, None);
    }

    #[test]
    fn experiments_par_read_is_the_paper_setting() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/par-read.fio");
        let f = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut want = parse(PAR_READ).jobs;
        want[0].origin = f.jobs[0].origin.clone();
        assert_eq!(f.jobs, want);
    }

    #[test]
    fn global_applies_to_the_jobs_below_it_only() {
        let f = parse(
            "[a]\n\
             [global]\nbs=8k\nrw=randread\n\
             [b]\nrw=write\n\
             [global]\nbs=16k\n\
             [c]\n",
        );
        let got: Vec<_> = f.jobs.iter().map(|j| (j.name.as_str(), j.bs_read, j.pattern)).collect();
        assert_eq!(
            got,
            [
                ("a", 4096, Pattern::Read),
                ("b", 8192, Pattern::Write),
                // a later [global] updates the defaults; it does not reset them
                ("c", 16384, Pattern::RandRead),
            ]
        );
    }

    #[test]
    fn job_overrides_global_and_jobs_do_not_leak_into_each_other() {
        let f = parse("[global]\nbs=8k\n[a]\nbs=64k\nnumjobs=2\n[b]\n");
        assert_eq!((f.jobs[0].bs_read, f.jobs[0].numjobs), (65536, 2));
        assert_eq!((f.jobs[1].bs_read, f.jobs[1].numjobs), (8192, 1));
    }

    #[test]
    fn kb_base_applies_to_its_whole_section_and_is_inherited() {
        let f = parse("[global]\nsize=8k\nkb_base=1000\n[a]\noffset=1k\n[b]\nkb_base=1024\noffset=1k\n");
        assert_eq!((f.jobs[0].size, f.jobs[0].offset), (Some(8000), 1000));
        assert_eq!((f.jobs[1].size, f.jobs[1].offset), (Some(8000), 1024));
    }

    #[test]
    fn comments_blank_lines_and_spacing() {
        let f = parse(
            "; fio-style comment\n\
             # shell-style comment\n\
             \n\
             \t  [global]   ; after a header\n\
             \x20 bs = 8k   # after a value\n\
             rw=read ;no space after the semicolon\n\
             time_based ; bare key\n\
             runtime = 10s\r\n\
             \n\
             [ spaced ]\n\
             \x20   ;indented comment\n",
        );
        let j = &f.jobs[0];
        assert_eq!(j.name, "spaced");
        assert_eq!((j.bs_read, j.pattern, j.time_based), (8192, Pattern::Read, true));
        assert_eq!(j.runtime, Some(Duration::from_secs(10)));
        assert_eq!(parse("\u{feff}[j]\n").jobs[0].name, "j");
    }

    #[test]
    fn a_comment_mark_inside_a_value_is_part_of_it() {
        assert!(error("[j]\nbs=4k;4k\n").contains("malformed size `4k;4k`"));
        let f = parse("[j]\ndescription=item#3 and more\n");
        assert_eq!(f.jobs[0].name, "j");
    }

    #[test]
    fn errors_name_file_line_and_option() {
        assert_eq!(
            parse_str("[global]\nrw=read\n\n[par-read]\nnumjobs=4\n\nbs=4q\n", "jobs/par-read.fio")
                .unwrap_err()
                .to_string(),
            "jobs/par-read.fio:7: option `bs`: malformed size `4q` (expected e.g. 4k, 1M, 512)"
        );
        assert_eq!(
            error("[j]\nbs=4k\ncgroup_weight=100\n"),
            "t.fio:3: unknown option `cgroup_weight` (headway does not implement it)"
        );
        // an error found when the job is finished points at the line that set the option,
        // even in a [global] above
        assert_eq!(
            error("[global]\ntime_based\n[j]\n"),
            "t.fio:2: option `time_based`: needs a `runtime` to run for"
        );
        let e = parse_str("[j]\nbs=1\n", "t.fio").unwrap_err();
        assert_eq!(e.origin(), Some(&Origin { file: "t.fio".into(), line: 2 }));
    }

    #[test]
    fn syntax_errors() {
        assert_eq!(
            error("bs=4k\n[j]\n"),
            "t.fio:1: option `bs` comes before any [section] (start with [global] or [name])"
        );
        assert!(error("[j\n").contains("t.fio:1: malformed section header `[j`"));
        assert!(error("[j]\n[]\n").contains("t.fio:2: empty section name"));
        assert!(error("[j]\n=4k\n").contains("t.fio:2: `=4k` has no option name"));
        assert!(error("[j]\ninclude common.fio\n").contains("t.fio:2: `include` is not supported"));
        assert!(error("[j]\nbs 4k\n").contains("unknown option `bs 4k`"));
    }

    #[test]
    fn variables_are_refused_by_name() {
        let e = error("[j]\nsize=${SIZE}\n");
        assert!(e.starts_with("t.fio:2: option `size`: `${SIZE}`: headway does not expand"), "{e}");
        assert!(error("[j]\nnumjobs=$NUMJOBS\n").contains("`$NUMJOBS`"));
        assert!(error("[j]\nsize=8*$mb_memory\n").contains("`$mb_memory`"));
        assert_eq!(find_variable("a$"), None);
        assert_eq!(find_variable("${X"), Some("${X"));
    }

    #[test]
    fn files_without_jobs() {
        assert_eq!(error(""), "t.fio: no job sections (a job is a `[name]` section other than `[global]`)");
        assert!(error("[global]\nbs=8k\n").contains("no job sections"));
    }

    #[test]
    fn unreadable_file() {
        let e = parse_file(Path::new("/nonexistent/missing.fio")).unwrap_err();
        assert_eq!(e.to_string(), "/nonexistent/missing.fio: cannot read");
        let source = std::error::Error::source(&e).expect("the io error is the source");
        assert!(source.to_string().starts_with("No such file or directory"), "{source}");
    }

    #[test]
    fn a_job_may_repeat_an_option_the_last_one_wins() {
        assert_eq!(parse("[j]\nbs=8k\nbs=16k\n").jobs[0].bs_read, 16384);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// One job-file-like line: a (maybe broken) header, a real option with a random value,
        /// any `key[=value]`, a comment, or nothing.
        const LINE: &str = concat!(
            "\\[[a-z]{0,4}\\]?",
            "|(bs|size|rw|offset|numjobs|iodepth|ioengine|thinktime|runtime|rate_iops",
            "|zonesize|zonemode|kb_base|time_based|direct)(=[0-9a-z,:%]{0,6})?",
            "|[a-z_]{1,10}(=[0-9a-zA-Z,:%$#; ]{0,8})?|[;#].*|",
        );

        proptest! {
            /// Whatever the text, the parser answers (a JobFile or an error naming the file),
            /// never panics.
            #[test]
            fn never_panics(text in proptest::collection::vec(LINE, 0..10)) {
                let text = text.join("\n");
                match parse_str(&text, "p.fio") {
                    Ok(f) => prop_assert!(!f.jobs.is_empty()),
                    Err(e) => prop_assert!(e.to_string().starts_with("p.fio")),
                }
            }

            /// `[global]` values reach every job that does not override them.
            #[test]
            fn global_inheritance(
                g in 1u64..64,
                own in proptest::option::of(1u64..64),
                n in 1usize..5,
            ) {
                let mut text = format!("[global]\nbs={}k\n", g * 4);
                for i in 0..n {
                    text += &format!("[job{i}]\n");
                    if i == 0 {
                        if let Some(o) = own { text += &format!("bs={}k\n", o * 4); }
                    }
                }
                let f = parse(&text);
                prop_assert_eq!(f.jobs.len(), n);
                for (i, j) in f.jobs.iter().enumerate() {
                    let want = if i == 0 { own.unwrap_or(g) } else { g } * 4096;
                    prop_assert_eq!(j.bs_read, want);
                }
            }
        }
    }

    #[test]
    fn headway_options_written_as_comments() {
        let f = parse(
            "[global]\n; @headway weight=2\n# @headway headway_vm=guest1 ; why\n\
             ; headway: an ordinary comment, not an option\n; @headwayish weight=9\n[j]\nbs=4k\n",
        );
        assert_eq!(f.jobs[0].headway_weight, 2);
        assert_eq!(f.jobs[0].headway_vm.as_deref(), Some("guest1"));
        assert_eq!(
            error("[j]\n; @headway bogus=1\n"),
            "t.fio:2: unknown option `headway_bogus` (headway does not implement it)"
        );
        assert!(error("[j]\n; @headway weight=0\n").starts_with("t.fio:2: "), "values are checked");
        assert!(error("[j]\n; @headway\n").contains("without an option"));
        assert!(error("; @headway weight=2\n[j]\n").contains("before any [section]"));
    }

    #[test]
    fn ioscheduler_names_the_run_s_scheduler() {
        let f = parse("[global]\nioscheduler=deadline\n[a]\n[b]\n");
        assert_eq!(f.ioscheduler(), Ok(Some("deadline")));
        assert_eq!(parse("[a]\nioscheduler=none\n").ioscheduler(), Ok(Some("noop")), "Linux's none");
        assert_eq!(parse("[a]\nbs=4k\n").ioscheduler(), Ok(None));
        assert!(error("[a]\nioscheduler=elevator9\n").contains("unknown scheduler `elevator9`"));
        let e = parse("[a]\nioscheduler=deadline\n[b]\nioscheduler=stream\n").ioscheduler().unwrap_err();
        assert!(
            e.contains("job `b` sets ioscheduler=stream but job `a` (line 1) sets ioscheduler=deadline"),
            "{e}"
        );
    }
}
