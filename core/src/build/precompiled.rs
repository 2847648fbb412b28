//! A precompiled standard library: the state the compiler has after reading the stdlib's
//! files, saved once so a cold compile starts from it instead of parsing and lowering some
//! 330 KB of policy text again.
//!
//! [`precompile`] runs the per-file passes (headers, defaults, `let`s, lowering) over the
//! standard library alone and writes down what they leave behind: the `let` table with its
//! spans, the defaults with where they are declared, the scripts, and the lowered rules,
//! guides, detectors and roles, with the index's tries over those rules (borrowed by a set
//! for every slot its own rules leave alone). [`build_precompiled`] plants that state in a
//! fresh compiler and runs the same passes over the remaining files only; every set-wide
//! pass (ids, disabled rules, defaults, runtime lists, the index) then sees exactly what a
//! full build sees. The image is checked in beside the stdlib (`stdlib-policies/precompiled/`) and a
//! test fails while it differs from what [`precompile`] makes of the current sources.
//!
//! The image is used only when it is certain to describe the sources given; otherwise the
//! build is a full one and says why ([`PrecompiledUse`]):
//! - the leading sources must be the image's files, byte for byte, all of the stdlib layer
//!   (a stdlib edited after the image was made is compiled from its text);
//! - the build must be lazy: a full build also lints and checks every stdlib regex and
//!   glob, which the image (made lazily) has not done;
//! - no file may `override let`: an override changes what the stdlib's own rules expand
//!   to, and its weakening check reads their syntax.
//!
//! The set a precompiled build returns holds the remaining files' `test` blocks only; the
//! stdlib's are checked by its own tests, and `contextos test` compiles from source.

use super::context::{Ctx, EncodedLets, LetDef};
use super::output::{BuildOptions, BuildOutput, PolicySource};
use super::passes::{compile, lower, parse_all, Lowering, Seed};
use crate::detector::CompiledDetector;
use crate::ir::Layer;
use crate::request::Domain;
use crate::rules::EncodedRules;
use crate::snapshot::{self, EmbeddedDetectors, GuideSnap, SNAPSHOT_FORMAT};
use contextos_grammar::ast::{Effect, ListItem, Span, Statement};
use contextos_grammar::SourceFile;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// Bumped whenever the image's own layout changes; the IR inside it follows
/// [`SNAPSHOT_FORMAT`], which the image records too.
const IMAGE_FORMAT: u32 = 5;

/// The image's first fields, which [`embedded_detectors`] reads without decoding the rest:
/// postcard writes a nested struct's fields in place, so they lead the image's bytes.
#[derive(Serialize, Deserialize)]
struct ImageHead<'a> {
    format: u32,
    snapshot_format: u32,
    /// The sha256 of `detectors`: what a snapshot that refers to them instead of holding
    /// a copy records (see [`EmbeddedDetectors`]).
    detectors_digest: [u8; 32],
    /// The detectors, encoded as a snapshot encodes the list: a build that adds or
    /// disables none writes these bytes into its snapshot as they are, or refers to them.
    #[serde(borrow)]
    detectors: Text<'a>,
}

#[derive(Serialize, Deserialize)]
struct Image<'a> {
    #[serde(borrow)]
    head: ImageHead<'a>,
    /// `(name, text)` of every file the image covers, in order: the image applies only to
    /// these exact sources. The text is kept as bytes: compared byte for byte, it needs
    /// no UTF-8 check of its 330 KB on every decode.
    #[serde(borrow)]
    files: Vec<(&'a str, Text<'a>)>,
    /// The `let` table: each name, sorted, with its definition encoded apart, decoded
    /// only when a later file names it (see [`EncodedLets`]).
    #[serde(borrow)]
    lets: Vec<(&'a str, Text<'a>)>,
    /// Each declared default with the file and span declaring it.
    defaults: Vec<(Domain, Effect, usize, Span)>,
    scripts: Vec<(Domain, String)>,
    /// Each rule in a snapshot's rule encoding.
    #[serde(borrow)]
    rules: Vec<Text<'a>>,
    /// The index's tries over these rules alone, one per slot in the index's order: a
    /// set that adds no rule to a slot has the same trie there (see
    /// [`EncodedRules::with_tries`]), which a cold call then borrows instead of freezing.
    #[serde(borrow)]
    tries: Vec<Text<'a>>,
    guides: Vec<GuideSnap>,
    /// Each detector's file index and id, in order.
    detector_ids: Vec<(usize, String)>,
    roles: BTreeSet<String>,
    /// The roles the rules' conditions compare with: a build on the image reads no
    /// further than its rules' heads, so what a snapshot's head records of their
    /// conditions is recorded here.
    role_literals: BTreeSet<String>,
}

/// Bytes written as postcard writes a byte string and borrowed back from the image.
struct Text<'a>(&'a [u8]);

impl Serialize for Text<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de [u8]>::deserialize(d).map(Text)
    }
}

#[derive(Serialize, Deserialize)]
struct LetImage {
    items: Vec<ListItem>,
    scalar: bool,
    file: usize,
    span: Span,
}

/// Why [`precompile`] refused its sources.
#[derive(Debug, thiserror::Error)]
pub enum PrecompileError {
    /// A source is not of the stdlib layer.
    #[error("`{0}` is not a standard-library source; only the stdlib is precompiled")]
    NotStdlib(String),
    /// The sources do not compile cleanly on their own (first diagnostic, rendered).
    #[error("the sources do not compile cleanly on their own:\n{0}")]
    Diagnostics(String),
    /// The compiled state could not be encoded.
    #[error("cannot encode the precompiled image: {0}")]
    Encode(String),
}

/// Whether [`build_precompiled`] started from the image, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrecompiledUse {
    /// The image was planted; only the files after it were compiled.
    Used,
    /// The build was not lazy (see [`BuildOptions::lazy`]).
    NotLazy,
    /// The image does not decode, or was made by a build with another format.
    Unreadable(String),
    /// The leading sources are not the image's files.
    SourcesDiffer,
    /// A file overrides a `let`.
    OverrideLet,
}

impl std::fmt::Display for PrecompiledUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrecompiledUse::Used => f.write_str("built on the precompiled standard library"),
            PrecompiledUse::NotLazy => f.write_str("a full build compiles the stdlib from source"),
            PrecompiledUse::Unreadable(why) => {
                write!(f, "the precompiled standard library does not decode: {why}")
            }
            PrecompiledUse::SourcesDiffer => f.write_str(
                "the stdlib sources differ from the precompiled image; compiled from source",
            ),
            PrecompiledUse::OverrideLet => {
                f.write_str("an `override let` changes the stdlib's rules; compiled from source")
            }
        }
    }
}

/// The compiler's state after `sources` (the standard library's files, in order), as
/// bytes for [`build_precompiled`]. The sources must build lazily without a single
/// diagnostic, so a precompiled build can report nothing about them that a full one would.
pub fn precompile(sources: &[PolicySource]) -> Result<Vec<u8>, PrecompileError> {
    if let Some(s) = sources.iter().find(|s| s.layer != Layer::Stdlib) {
        return Err(PrecompileError::NotStdlib(s.name.clone()));
    }
    let lazy = BuildOptions {
        lazy: true,
        ..BuildOptions::default()
    };
    let full = full(sources, &lazy);
    if let Some(d) = full.diagnostics.first() {
        return Err(PrecompileError::Diagnostics(full.render(d)));
    }
    let files: Vec<SourceFile> = sources
        .iter()
        .map(|s| SourceFile::new(s.name.clone(), s.text.clone()))
        .collect();
    let mut ctx = Ctx::new(&files, sources.iter().map(|s| s.layer).collect(), true);
    let asts: Vec<_> = parse_all(sources).into_iter().map(|p| p.file).collect();
    let (low, _tests) = lower(&mut ctx, 0, asts, Lowering::default());
    if let Some(d) = ctx.diags.first() {
        return Err(PrecompileError::Diagnostics(d.diagnostic.message.clone()));
    }
    let mut lets = ctx
        .lets
        .iter()
        .map(|(name, d)| {
            let image = LetImage {
                items: d.items.to_vec(),
                scalar: d.scalar,
                file: d.file,
                span: d.span,
            };
            postcard::to_stdvec(&image).map(|bytes| (name.as_str(), bytes))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PrecompileError::Encode(e.to_string()))?;
    lets.sort_by(|a, b| a.0.cmp(b.0));
    let encoded = low
        .rules
        .iter()
        .map(snapshot::encode_rule)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PrecompileError::Encode(e.to_string()))?;
    let rules = encoded.iter().map(|r| Text(r)).collect();
    let guides = low.guides.iter().map(snapshot::guide_snap).collect();
    let detector_ids = low
        .detectors
        .iter()
        .map(|(fi, d)| (*fi, d.id.clone()))
        .collect();
    let compiled = crate::rules::Rules::from(low.rules);
    let tries = crate::index::Slot::ALL
        .iter()
        .map(|slot| slot.freeze(&compiled))
        .collect::<Result<Vec<_>, _>>()
        .map_err(PrecompileError::Encode)?;
    let list: Vec<&CompiledDetector> = low.detectors.iter().map(|(_, d)| d).collect();
    let detectors =
        postcard::to_stdvec(&list).map_err(|e| PrecompileError::Encode(e.to_string()))?;
    let image = Image {
        head: ImageHead {
            format: IMAGE_FORMAT,
            snapshot_format: SNAPSHOT_FORMAT,
            detectors_digest: Sha256::digest(&detectors).into(),
            detectors: Text(&detectors),
        },
        files: sources
            .iter()
            .map(|s| (s.name.as_str(), Text(s.text.as_bytes())))
            .collect(),
        lets: lets
            .iter()
            .map(|(name, bytes)| (*name, Text(bytes)))
            .collect(),
        defaults: low
            .defaults
            .iter()
            .map(|(d, (e, _, fi, span))| (*d, *e, *fi, *span))
            .collect(),
        scripts: ctx.scripts.sources().to_vec(),
        rules,
        tries: tries.iter().map(|t| Text(t)).collect(),
        guides,
        detector_ids,
        roles: low.roles,
        role_literals: compiled.role_literals(),
    };
    postcard::to_stdvec(&image).map_err(|e| PrecompileError::Encode(e.to_string()))
}

/// The detectors `image` holds, to share with the snapshots of sets built on it; `None`
/// when the image does not decode or is of another format (then no snapshot shares them,
/// and a snapshot that does is refused).
pub fn embedded_detectors(image: &'static [u8]) -> Option<EmbeddedDetectors> {
    let (head, _) = postcard::take_from_bytes::<ImageHead<'static>>(image).ok()?;
    ((head.format, head.snapshot_format) == (IMAGE_FORMAT, SNAPSHOT_FORMAT)).then_some(
        EmbeddedDetectors {
            bytes: head.detectors.0,
            digest: head.detectors_digest,
        },
    )
}

/// The image decoded, if it describes the leading `sources`.
fn image(image: &'static [u8], sources: &[PolicySource]) -> Result<Image<'static>, PrecompiledUse> {
    let img: Image =
        postcard::from_bytes(image).map_err(|e| PrecompiledUse::Unreadable(e.to_string()))?;
    if (img.head.format, img.head.snapshot_format) != (IMAGE_FORMAT, SNAPSHOT_FORMAT) {
        return Err(PrecompiledUse::Unreadable(format!(
            "made with image format {} and snapshot format {}, this build has {IMAGE_FORMAT} and {SNAPSHOT_FORMAT}",
            img.head.format, img.head.snapshot_format
        )));
    }
    let same = sources.len() >= img.files.len()
        && img.files.iter().zip(sources).all(|((name, text), s)| {
            s.layer == Layer::Stdlib && s.name == *name && s.text.as_bytes() == text.0
        });
    if !same {
        return Err(PrecompiledUse::SourcesDiffer);
    }
    Ok(img)
}

/// The image decoded, with the heads of its rules: what [`seed`] plants.
struct Decoded {
    img: Image<'static>,
    rules: EncodedRules,
}

/// Decodes the image, if it describes the leading `sources`, and its rules' heads; a rule
/// is decoded whole when a request first names it.
fn decode(image_bytes: &'static [u8], sources: &[PolicySource]) -> Result<Decoded, PrecompiledUse> {
    let mut img = image(image_bytes, sources)?;
    let scripts = img.scripts.len();
    let bytes = std::mem::take(&mut img.rules)
        .into_iter()
        .map(|t| t.0)
        .collect();
    // The image is part of this build, and its globs are the stdlib's, which a lazy
    // build does not validate either.
    let decode: crate::rules::DecodeRule = Box::new(move |bytes| {
        crate::glob::decoding_trusted(|| snapshot::rule_from(bytes, scripts))
    });
    let role_literals = std::mem::take(&mut img.role_literals);
    if img.tries.len() != crate::index::Slot::ALL.len() {
        return Err(PrecompiledUse::Unreadable(format!(
            "{} index tries, {} expected",
            img.tries.len(),
            crate::index::Slot::ALL.len()
        )));
    }
    let tries = std::mem::take(&mut img.tries)
        .into_iter()
        .map(|t| t.0)
        .collect();
    let rules = EncodedRules::new(bytes, decode, role_literals)
        .ok_or_else(|| PrecompiledUse::Unreadable("a rule's head does not decode".into()))?
        .with_tries(tries);
    Ok(Decoded { img, rules })
}

/// What the decoded image plants, with each of its detectors' file index (for
/// [`decode_detectors`] later). Its detectors stay encoded unless `disabled` names one of
/// them, and its rules unless `disabled` names one of them.
fn seed(decoded: Decoded, disabled: &[String]) -> Planted {
    let Decoded { img, rules } = decoded;
    let disables_detector = disabled
        .iter()
        .any(|id| img.detector_ids.iter().any(|(_, d)| d == id));
    let disables_rule = disabled.iter().any(|id| rules.ids().any(|r| r == id));
    let (rules, encoded_rules) = if disables_rule {
        let all = rules
            .decode_all()
            .ok_or_else(|| PrecompiledUse::Unreadable("a rule does not decode".into()))?;
        (all, None)
    } else {
        (Vec::new(), Some(rules))
    };
    let in_range = |fi: usize| fi < img.files.len();
    let damaged = |what: &str| PrecompiledUse::Unreadable(format!("{what} out of range"));
    if !img.lets.windows(2).all(|w| w[0].0 < w[1].0) {
        return Err(PrecompiledUse::Unreadable(
            "the `let` table is not sorted".into(),
        ));
    }
    // A `let` that does not decode reads as undefined: a rule naming it is an error. The
    // runtime's lists are read by no rule, and one missing would silently protect less:
    // those are decoded now, and the build is a full one if one of them is damaged.
    let runtime_damaged = img.lets.iter().any(|(name, t)| {
        crate::policy::RUNTIME_LETS.contains(name)
            && decode_let(t.0).is_none_or(|d| !in_range(d.file))
    });
    if runtime_damaged {
        return Err(damaged("a runtime `let`"));
    }
    if img.defaults.iter().any(|d| !in_range(d.2))
        || img.detector_ids.iter().any(|d| !in_range(d.0))
    {
        return Err(damaged("a file index"));
    }
    let detector_files: Vec<usize> = img.detector_ids.iter().map(|(fi, _)| *fi).collect();
    let (detectors, encoded_detectors) = if disables_detector {
        (
            decode_detectors(img.head.detectors.0, &detector_files)?,
            None,
        )
    } else {
        (Vec::new(), Some(img.head.detectors.0))
    };
    let lets = EncodedLets {
        lets: img.lets.into_iter().map(|(name, t)| (name, t.0)).collect(),
        decode: Some(decode_let),
        files: img.files.len(),
    };
    let defaults = img
        .defaults
        .into_iter()
        .map(|(d, e, fi, span)| (d, (e, Layer::Stdlib, fi, span)))
        .collect();
    let seed = Seed {
        files: img.files.len(),
        lets,
        scripts: img.scripts,
        low: Lowering {
            defaults,
            rules,
            encoded_rules,
            guides: img.guides.into_iter().map(snapshot::guide_from).collect(),
            detectors,
            encoded_detectors,
            roles: img.roles,
        },
    };
    Ok((seed, detector_files))
}

/// One `let` of the image, decoded.
fn decode_let(bytes: &[u8]) -> Option<LetDef> {
    let l: LetImage = postcard::from_bytes(bytes).ok()?;
    Some(LetDef {
        items: l.items.into(),
        scalar: l.scalar,
        file: l.file,
        span: l.span,
    })
}

/// The image's detectors decoded, each with its file index from `files`.
fn decode_detectors(
    bytes: &[u8],
    files: &[usize],
) -> Result<Vec<(usize, CompiledDetector)>, PrecompiledUse> {
    let list: Vec<CompiledDetector> = postcard::from_bytes(bytes)
        .map_err(|e| PrecompiledUse::Unreadable(format!("the detectors: {e}")))?;
    if list.len() != files.len() {
        return Err(PrecompiledUse::Unreadable(
            "the detectors do not match their ids".into(),
        ));
    }
    Ok(files.iter().copied().zip(list).collect())
}

/// A build of every source from its text.
fn full(sources: &[PolicySource], options: &BuildOptions) -> BuildOutput {
    compile(sources, options, parse_all(sources), None)
}

/// Whether any file declares a detector.
fn adds_detectors(parsed: &[contextos_grammar::ParseOutput]) -> bool {
    parsed.iter().any(|p| {
        p.file
            .statements
            .iter()
            .any(|s| matches!(s, Statement::Detector(_)))
    })
}

/// Whether any file overrides a `let`.
fn overrides_a_let(parsed: &[contextos_grammar::ParseOutput]) -> bool {
    parsed.iter().any(|p| {
        p.file
            .statements
            .iter()
            .any(|s| matches!(s, Statement::Let(l) if l.overrides))
    })
}

/// [`build`](super::build), started from `image_bytes` ([`precompile`]'s bytes, embedded
/// in the binary: the set keeps borrowing its detectors) when it
/// describes the leading sources; a full build otherwise. Either way the set, its
/// snapshot and every diagnostic are the full build's (the set's `test` blocks aside: see
/// the module's documentation).
pub fn build_precompiled(
    image_bytes: &'static [u8],
    sources: &[PolicySource],
    options: &BuildOptions,
) -> (BuildOutput, PrecompiledUse) {
    if !options.lazy {
        return (full(sources, options), PrecompiledUse::NotLazy);
    }
    // The image can cover only the leading stdlib files; what follows them is parsed while
    // the image decodes (see `decode_beside`).
    let leading = sources
        .iter()
        .take_while(|s| s.layer == Layer::Stdlib)
        .count();
    let (planted, parsed) = decode_beside(image_bytes, sources, leading, options);
    let (mut seed, detector_files) = match planted {
        Ok(planted) => planted,
        // A full build, which needs only the leading files parsed on top of the others.
        Err(why) => {
            let mut all = parse_all(&sources[..leading]);
            all.extend(parsed);
            return (compile(sources, options, all, None), why);
        }
    };
    let covered = seed.files;
    // An image of fewer files than the stdlib layer has (one made without a file that a
    // project added to that layer) leaves those to parse; the others' parses are made.
    // The image checked that its files are all of the stdlib layer, so `covered <= leading`.
    let mut rest = parse_all(sources.get(covered..leading).unwrap_or_default());
    rest.extend(parsed);
    if overrides_a_let(&rest) {
        let mut parsed = parse_all(&sources[..covered]);
        parsed.extend(rest);
        return (
            compile(sources, options, parsed, None),
            PrecompiledUse::OverrideLet,
        );
    }
    // Detectors added after the image's are checked against theirs (ids, and a scan
    // reads them all): the image's are decoded.
    if adds_detectors(&rest) {
        if let Some(bytes) = seed.low.encoded_detectors.take() {
            match decode_detectors(bytes, &detector_files) {
                Ok(d) => seed.low.detectors = d,
                Err(why) => return (full(sources, options), why),
            }
        }
    }
    (
        compile(sources, options, rest, Some(seed)),
        PrecompiledUse::Used,
    )
}

/// The image planted, with each of its detectors' file index (see [`seed`]), or why not.
type Planted = Result<(Seed, Vec<usize>), PrecompiledUse>;

/// Below this many bytes of text after the image's files, the image decodes and they
/// parse on the calling thread: a second thread, and the malloc arena it grows, cost
/// more than the overlap saves.
const BESIDE_BYTES: usize = 16 * 1024;

/// The image decoded and planted, and the files from `leading` on parsed. With enough
/// text to parse (a project's own policies), a second thread decodes and plants the image
/// while this one runs the parser: neither depends on the other. With more text than
/// the image takes to plant, the second thread then parses the text's last part (see
/// [`Cut`]); otherwise it makes the files' lexical scans, which this one would have to
/// make before it could cut the text anywhere.
fn decode_beside(
    image_bytes: &'static [u8],
    sources: &[PolicySource],
    leading: usize,
    options: &BuildOptions,
) -> (Planted, Vec<contextos_grammar::ParseOutput>) {
    use contextos_grammar::lexical::{scan, Scan};
    use contextos_grammar::{finish, parse_unscanned, MAX_NESTING};
    let planted = || decode(image_bytes, sources).and_then(|d| seed(d, &options.disabled_rules));
    let rest = &sources[leading..];
    let total = rest.iter().map(|s| s.text.len()).sum::<usize>();
    if total < BESIDE_BYTES {
        return (planted(), parse_all(rest));
    }
    let scan_all = || -> Vec<Scan> { rest.iter().map(|s| scan(&s.text, MAX_NESTING)).collect() };
    if total > IMAGE_AS_TEXT {
        let scans = scan_all();
        let cut = Cut::at(rest, &scans, total);
        let ((planted, tail), head) =
            crate::beside::both(|| (planted(), cut.tail(rest)), || cut.head(rest, &scans));
        return (planted, cut.join(rest, scans, head, tail));
    }
    let ((planted, scans), passes) = crate::beside::both(
        || (planted(), scan_all()),
        || {
            rest.iter()
                .map(|s| parse_unscanned(&s.text))
                .collect::<Vec<_>>()
        },
    );
    let parsed = rest
        .iter()
        .zip(passes)
        .zip(scans)
        .map(|((s, pass), scan)| finish(&s.text, pass, scan))
        .collect();
    (planted, parsed)
}

/// How much policy text this thread parses in the time the second one takes to start,
/// decode and plant the image (about 0.45 ms on the 2-vCPU machine of the benchmarks
/// chapter, most of it the thread's start; chosen among 8, 20, 32 and 48 KB by timing
/// the parse of `hook_latency`'s generated rules with each).
const IMAGE_AS_TEXT: usize = 32 * 1024;

/// Where the text after the image is cut between the two threads: the files before
/// `file` and the part of `file` before byte `at` parse on this thread, the rest on the
/// second one once it has planted the image. `at` is the end of one of the statements
/// the file's lexical scan found, nearest to the byte that gives both threads the same
/// work, counting the image for the second and the scans for this one.
struct Cut {
    file: usize,
    at: usize,
}

/// This thread makes every scan before it parses. A scan reads text some ten times as
/// fast as the parser, so the scans count as a tenth of the text in its share.
const SCAN_SHARE: usize = 10;

impl Cut {
    fn at(files: &[PolicySource], scans: &[contextos_grammar::lexical::Scan], total: usize) -> Cut {
        let target = (total + IMAGE_AS_TEXT).saturating_sub(total / SCAN_SHARE) / 2;
        let mut before = 0;
        for (file, s) in files.iter().enumerate() {
            let len = s.text.len();
            if before + len > target {
                let want = target - before;
                let ends = scans.get(file).map(|sc| sc.statements.as_slice());
                let at = ends
                    .unwrap_or_default()
                    .iter()
                    .map(|sp| sp.end)
                    .min_by_key(|end| end.abs_diff(want))
                    .unwrap_or(0);
                return Cut { file, at };
            }
            before += len;
        }
        Cut {
            file: files.len(),
            at: 0,
        }
    }

    /// This thread's share, parsed: whole files, then the cut file's head.
    fn head(
        &self,
        files: &[PolicySource],
        scans: &[contextos_grammar::lexical::Scan],
    ) -> Vec<contextos_grammar::Unscanned> {
        let mut out: Vec<_> = files
            .iter()
            .take(self.file)
            .map(|s| contextos_grammar::parse_unscanned(&s.text))
            .collect();
        if let (Some(s), Some(scan)) = (files.get(self.file), scans.get(self.file)) {
            let room = scan.statements.len();
            out.push(contextos_grammar::parse_unscanned_until(
                &s.text, self.at, room,
            ));
        }
        out
    }

    /// The second thread's share, parsed: the cut file's tail, then whole files.
    fn tail(&self, files: &[PolicySource]) -> Vec<contextos_grammar::Unscanned> {
        let cut = files
            .get(self.file)
            .map(|s| contextos_grammar::parse_unscanned_from(&s.text, self.at));
        let after = files.iter().skip(self.file + 1);
        cut.into_iter()
            .chain(after.map(|s| contextos_grammar::parse_unscanned(&s.text)))
            .collect()
    }

    /// Every file's parse, in order, from the two shares.
    fn join(
        &self,
        files: &[PolicySource],
        scans: Vec<contextos_grammar::lexical::Scan>,
        head: Vec<contextos_grammar::Unscanned>,
        tail: Vec<contextos_grammar::Unscanned>,
    ) -> Vec<contextos_grammar::ParseOutput> {
        use contextos_grammar::{finish, finish_split, parse};
        use std::cmp::Ordering;
        // `head` holds a pass for each file up to the cut one and its head; `tail` the
        // cut file's tail and a pass for each file after it. A pass missing (which the
        // shares never leave) means a plain parse of that file.
        let (mut head, mut tail) = (head.into_iter(), tail.into_iter());
        let one = |text: &str, pass: Option<_>, scan| match pass {
            Some(pass) => finish(text, pass, scan),
            None => parse(text),
        };
        files
            .iter()
            .zip(scans)
            .enumerate()
            .map(|(i, (s, scan))| match i.cmp(&self.file) {
                Ordering::Less => one(&s.text, head.next(), scan),
                Ordering::Greater => one(&s.text, tail.next(), scan),
                Ordering::Equal => match (head.next(), tail.next()) {
                    (Some(h), Some(t)) => finish_split(&s.text, h, t, scan),
                    _ => parse(&s.text),
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{build_precompiled, Image, PrecompiledUse, Text};
    use crate::build::output::{BuildOptions, PolicySource};
    use crate::ir::Layer;

    fn stdlib() -> Vec<PolicySource> {
        contextos_stdlib::FILES
            .iter()
            .map(|(name, text)| PolicySource::embedded_stdlib(name, text))
            .collect()
    }

    /// The embedded image with the definition of `let name` replaced by `bytes`.
    fn with_let(name: &str, bytes: &'static [u8]) -> &'static [u8] {
        let mut img: Image =
            postcard::from_bytes(contextos_stdlib::PRECOMPILED).expect("the image decodes");
        let at = img.lets.iter().position(|(n, _)| *n == name);
        let slot = at
            .and_then(|i| img.lets.get_mut(i))
            .expect("the stdlib defines it");
        slot.1 = Text(bytes);
        let bytes = postcard::to_stdvec(&img).expect("the image encodes");
        Box::leak(bytes.into_boxed_slice())
    }

    /// A runtime list is read by no rule, so a damaged one would be missed silently (less
    /// protection, no error): the image is refused and the stdlib compiled from source.
    /// Any other damaged `let` reads as undefined, which a rule naming it reports.
    #[test]
    fn a_damaged_let_in_the_image_never_goes_unnoticed() {
        let lazy = BuildOptions {
            lazy: true,
            ..BuildOptions::default()
        };
        let image = with_let("secret_env_vars", b"\xff\xff\xff");
        let (out, used) = build_precompiled(image, &stdlib(), &lazy);
        assert!(matches!(used, PrecompiledUse::Unreadable(_)), "{used}");
        let set = out.policy.expect("the full build compiles");
        assert!(set.runtime_lets.contains_key("secret_env_vars"));

        let image = with_let("credential_files", b"\xff\xff\xff");
        let mut sources = stdlib();
        sources.push(PolicySource {
            name: ".contextos/policies/main.policy".into(),
            text: "language 1;\ndeny path read $credential_files because \"x\";\n".into(),
            layer: Layer::User,
        });
        let (out, used) = build_precompiled(image, &sources, &lazy);
        assert_eq!(used, PrecompiledUse::Used);
        assert!(
            out.policy.is_none(),
            "a rule naming a damaged `let` is refused"
        );
        assert!(out.diagnostics.iter().any(|d| d.diagnostic.code == "E0105"));
    }
}
