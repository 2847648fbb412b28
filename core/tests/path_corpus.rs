//! Adversarial corpus for the lexical stage of the safe-path primitive: every class of
//! name that escapes the project or aliases another file on some OS, with its stable code.
use contextos_core::canon::canonical_path;

fn code(p: &str) -> Result<String, &'static str> {
    canonical_path(p).map_err(|e| e.code)
}

fn rejected(class: &'static str, inputs: &[&str]) {
    for p in inputs {
        assert_eq!(code(p), Err(class), "{p:?} must be rejected as {class}");
    }
}

#[test]
fn absolute_unc_and_device_namespaces() {
    rejected(
        "path.absolute",
        &[
            "/etc/passwd",
            "/",
            "//server/share/x",
            "\\\\server\\share\\x",
            "\\\\?\\C:\\Windows",
            "\\\\.\\PhysicalDrive0",
            "\\\\?\\UNC\\server\\share",
            "\\Windows\\win.ini",
            "/./x",
            "\\\\.\\pipe\\x",
        ],
    );
}

#[test]
fn drive_letters_including_drive_relative() {
    rejected(
        "path.drive",
        &[
            "C:\\Windows",
            "c:/x",
            "C:",
            "z:relative",
            "D:..\\x",
            "c:.\\x",
        ],
    );
}

#[test]
fn traversal_anywhere() {
    rejected(
        "path.traversal",
        &[
            "..",
            "../x",
            "a/../b",
            "a/b/../../..",
            "a\\..\\..\\x",
            "./..",
            "x/..",
            "a/./../b",
            "..\\",
            "a//..//b",
        ],
    );
}

#[test]
fn alternate_data_streams() {
    rejected(
        "path.stream",
        &[
            "file.txt:hidden",
            "file.txt::$DATA",
            "dir/a:b",
            "src/main.rs:Zone.Identifier",
            ".git::$INDEX_ALLOCATION/config",
        ],
    );
}

#[test]
fn reserved_device_names_in_every_disguise() {
    rejected(
        "path.device",
        &[
            "CON",
            "con",
            "Con.txt",
            "PRN",
            "AUX",
            "NUL",
            "nul.txt",
            "nul.tar.gz",
            "NUL .txt",
            "COM1",
            "com9.log",
            "LPT1",
            "lpt5.txt",
            "COM0",
            "LPT0",
            "COM¹",
            "lpt²",
            "com³.txt",
            "CONIN$",
            "conout$.log",
            "CLOCK$",
            "dir/aux.c",
            "a/b/nul",
        ],
    );
}

#[test]
fn trailing_dots_and_spaces() {
    rejected(
        "path.trailing-dot-space",
        &[
            "foo.", "foo ", "foo. ", "dir./x", "dir /x", "a/b...", ".git.", ".git ", "...", "CON.",
        ],
    );
}

#[test]
fn nul_and_control_characters() {
    rejected("path.nul", &["a\0b", "\0", "src/\0/x"]);
    rejected(
        "path.control",
        &[
            "a\nb",
            "a\rb",
            "a\tb",
            "\u{1b}[31m",
            "x\u{7f}",
            "x\u{85}y",
            "\u{9b}x",
        ],
    );
}

#[test]
fn length_limits() {
    rejected("path.too-long", &[&"a/".repeat(3000)]);
    rejected(
        "path.segment-too-long",
        &[&"a".repeat(256), &format!("d/{}", "é".repeat(128))],
    );
    assert!(code(&"a".repeat(255)).is_ok());
}

#[test]
fn git_aliases() {
    rejected(
        "path.git-alias",
        &[
            ".GIT/config",
            ".Git/hooks/pre-commit",
            "sub/.gIt/HEAD",
            "GIT~1/config",
            "git~1",
            "vendor/GIT~1",
        ],
    );
    assert_eq!(
        code(".git/hooks/pre-commit").as_deref(),
        Ok(".git/hooks/pre-commit")
    );
    assert_eq!(
        code(".github/workflows/ci.yml").as_deref(),
        Ok(".github/workflows/ci.yml")
    );
}

#[test]
fn invisible_characters() {
    rejected(
        "path.invisible-char",
        &[
            ".g\u{200c}it/config",
            ".git\u{200d}/config",
            "\u{feff}.git/config",
            "a\u{200b}b",
            "x\u{2060}",
            "x\u{fe0f}",
            "a\u{e0041}b",
            "\u{202e}txt.exe",
        ],
    );
}

#[test]
fn unicode_normalisation_aliases() {
    // NFD spellings (as macOS produces them) alias the NFC name on HFS+/APFS.
    rejected(
        "path.unicode-normalization",
        &[
            "cafe\u{301}.txt",
            "n\u{303}/x",
            "A\u{30a}ngstro\u{308}m",
            "\u{212b}",
        ],
    );
    assert_eq!(code("café.txt").as_deref(), Ok("café.txt"));
}

#[test]
fn windows_reserved_characters() {
    rejected(
        "path.reserved-char",
        &["a<b", "a>b", "a\"b", "a|b", "what?.txt", "*.rs", "dir/x*"],
    );
}

#[test]
fn empty_and_root() {
    rejected(
        "path.empty",
        &[
            "",
            ".",
            "./",
            ".//.",
            "/".trim_start_matches('/'),
            "\\.".trim_start_matches('\\'),
        ],
    );
}

#[test]
fn ordinary_paths_pass_unchanged_or_normalised() {
    for (raw, canon) in [
        ("src/main.rs", "src/main.rs"),
        ("./src//main.rs", "src/main.rs"),
        ("src\\lib\\mod.rs", "src/lib/mod.rs"),
        ("a/./b/", "a/b"),
        (".env", ".env"),
        (
            ".contextos/policies/main.policy",
            ".contextos/policies/main.policy",
        ),
        ("docs/日本語.md", "docs/日本語.md"),
        ("my file.txt", "my file.txt"),
        ("a.b.c", "a.b.c"),
        ("CONFIG.md", "CONFIG.md"),
        ("auxiliary.rs", "auxiliary.rs"),
        ("nullable/x", "nullable/x"),
        ("LPT10", "LPT10"),
        ("gitx~1", "gitx~1"),
        (".gitattributes", ".gitattributes"),
    ] {
        assert_eq!(code(raw).as_deref(), Ok(canon), "{raw:?}");
    }
}

#[test]
fn canonical_output_is_a_fixed_point() {
    for raw in ["./a//b/", "a\\b\\c", "x/./y", "docs/guide/"] {
        let once = canonical_path(raw).unwrap_or_default();
        assert_eq!(
            canonical_path(&once).as_deref(),
            Ok(once.as_str()),
            "{raw:?}"
        );
    }
}

#[test]
fn tilde_percent_and_confusables() {
    rejected("path.tilde", &["~/.ssh/id_rsa", "~root/x", "~"]);
    rejected(
        "path.percent-encoded",
        &["%2e%2e/x", "a%2Fb", "%252e%252e", "x%00", "%c0%af"],
    );
    rejected(
        "path.confusable",
        &[
            "\u{ff0e}\u{ff0e}/x",
            "a\u{ff0f}b",
            "a\u{ff3c}b",
            "x\u{ff1a}y",
            "\u{2024}\u{2024}/x",
            "a\u{2215}b",
            "\u{ff05}2e",
            "\u{ff5e}/x",
            "a\u{2044}b",
        ],
    );
    assert_eq!(
        code("100% done.txt").as_deref(),
        Ok("100% done.txt"),
        "a % without two hex digits is a plain character"
    );
    assert_eq!(code("a~b").as_deref(), Ok("a~b"));
    assert_eq!(code("docs/日本語.md").as_deref(), Ok("docs/日本語.md"));
}

#[test]
fn leading_spaces() {
    rejected("path.leading-space", &[" x", "dir/ .git", "a/ b"]);
}

/// Generated combinations: every device name in every disguise, every separator style of
/// traversal and absolute forms, every case variant of `.git` — several hundred inputs.
#[test]
fn generated_corpus() {
    let mut n = 0;
    let devices = [
        "CON",
        "PRN",
        "AUX",
        "NUL",
        "COM1",
        "COM9",
        "LPT1",
        "LPT9",
        "COM\u{b9}",
        "LPT\u{b3}",
        "CONIN$",
        "CONOUT$",
    ];
    for d in devices {
        for name in [
            d.to_string(),
            d.to_lowercase(),
            format!("{d}.txt"),
            format!("{d} .log"),
            format!("{d}.tar.gz"),
        ] {
            for prefix in ["", "dir/", "a/b/"] {
                assert_eq!(
                    code(&format!("{prefix}{name}")),
                    Err("path.device"),
                    "{prefix}{name}"
                );
                n += 1;
            }
        }
    }
    for sep in ["/", "\\"] {
        for t in [
            "..",
            "a{s}..",
            "a{s}..{s}b",
            "..{s}..{s}x",
            "x{s}y{s}..{s}..{s}..",
        ] {
            let p = t.replace("{s}", sep);
            assert_eq!(code(&p), Err("path.traversal"), "{p}");
            n += 1;
        }
        for a in [
            "{s}etc{s}passwd",
            "{s}{s}server{s}share",
            "{s}{s}?{s}C:{s}x",
            "{s}{s}.{s}COM1",
        ] {
            let p = a.replace("{s}", sep);
            assert_eq!(code(&p), Err("path.absolute"), "{p}");
            n += 1;
        }
    }
    for variant in [
        ".GIT", ".Git", ".gIT", ".giT", ".GiT", "GIT~1", "git~1", "Git~1",
    ] {
        for suffix in ["", "/config", "/hooks/pre-commit"] {
            for prefix in ["", "sub/", "vendor/lib/"] {
                let p = format!("{prefix}{variant}{suffix}");
                assert_eq!(code(&p), Err("path.git-alias"), "{p}");
                n += 1;
            }
        }
    }
    for c in ['<', '>', '"', '|', '?', '*'] {
        for p in [format!("a{c}b"), format!("dir/{c}"), format!("{c}x/y")] {
            assert_eq!(code(&p), Err("path.reserved-char"), "{p}");
            n += 1;
        }
    }
    for cp in 0u32..0x20 {
        let c = char::from_u32(cp).unwrap_or('x');
        let want = if cp == 0 { "path.nul" } else { "path.control" };
        assert_eq!(code(&format!("a{c}b")), Err(want), "U+{cp:04X}");
        n += 1;
    }
    assert!(n >= 300, "only {n} generated cases");
}
