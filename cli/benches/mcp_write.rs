//! `write_file` through `contextos mcp`, whole process: rmcp's client over stdio against
//! the built binaries, one ~200-byte file per call (decision, lock, journaled commit and the
//! decision-log append included). Prints p50 / p95 / max.
//!
//! `cargo bench -p contextos --bench mcp_write` (release profile; `MCP_BENCH_CALLS`
//! sets the number of measured calls, default 300).

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a bench that cannot set up stops at once with the reason"
)]

use rmcp::model::ProtocolVersion;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt as _};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
struct Bench;

impl ClientHandler for Bench {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("contextos-bench", "0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// The release binaries beside this bench executable (target/release/deps/..).
fn front() -> PathBuf {
    let exe = std::env::current_exe().expect("bench path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let front = dir.join(contextos::FRONT);
    assert!(
        front.exists() && dir.join(contextos::COMPANION).exists(),
        "build the binaries first: cargo build --release -p contextos ({} missing)",
        front.display()
    );
    front
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let calls: usize = std::env::var("MCP_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let project = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(project.path().join(".git")).expect("project");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let samples = runtime.block_on(async {
        let mut cmd = tokio::process::Command::new(front());
        cmd.arg("--project").arg(project.path()).arg("mcp");
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn contextos mcp");
        let client = Bench.serve(transport).await.expect("handshake");
        let mut samples = Vec::with_capacity(calls);
        // The first calls compile the policies into the cache and warm the page cache.
        for i in 0..(calls + 20) {
            let serde_json::Value::Object(args) = serde_json::json!({
                "path": format!("src/f{}.txt", i % 50),
                "content": format!("line {i}\n").repeat(20),
            }) else {
                unreachable!("a JSON object literal")
            };
            let start = Instant::now();
            let r = client
                .call_tool(CallToolRequestParams::new("write_file").with_arguments(args))
                .await
                .expect("call");
            let took = start.elapsed();
            assert_ne!(r.is_error, Some(true), "write_file failed: {:?}", r.content);
            if i >= 20 {
                samples.push(took);
            }
        }
        client.cancel().await.expect("close");
        samples
    });
    let mut sorted = samples;
    sorted.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "mcp write_file ({} calls, ~200-byte files, stdio, whole process): p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        sorted.len(),
        ms(percentile(&sorted, 0.50)),
        ms(percentile(&sorted, 0.95)),
        ms(*sorted.last().expect("samples")),
    );
}
