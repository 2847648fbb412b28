#[test]
fn time_regexes() {
    use contextos_core::{build, BuildOptions, Layer, PolicySource};
    let sources: Vec<PolicySource> = contextos_stdlib::FILES
        .iter()
        .map(|(name, text)| PolicySource {
            name: name.to_string(),
            text: text.to_string(),
            layer: Layer::Stdlib,
        })
        .collect();
    let out = build(&sources, &BuildOptions::default());
    let policy = out.policy.unwrap();
    let mut v = Vec::new();
    let mut total = 0.0;
    let mut total_ascii = 0.0;
    for d in policy.detectors.get().unwrap() {
        for p in &d.patterns {
            let t = std::time::Instant::now();
            let _ = regex::bytes::RegexBuilder::new(p)
                .size_limit(1 << 22)
                .build();
            let e = t.elapsed().as_secs_f64() * 1000.0;
            total += e;
            let t = std::time::Instant::now();
            let ok = regex::bytes::RegexBuilder::new(p)
                .size_limit(1 << 22)
                .unicode(false)
                .build()
                .is_ok();
            let a = t.elapsed().as_secs_f64() * 1000.0;
            total_ascii += a;
            v.push((
                e,
                a,
                ok,
                d.id.clone(),
                p.chars().take(90).collect::<String>(),
            ));
        }
    }
    v.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    println!(
        "total {total:.1} ms ascii {total_ascii:.1} ms, {} regexes",
        v.len()
    );
    for x in v.iter().take(15) {
        println!("{:.2} {:.2} {} {} {}", x.0, x.1, x.2, x.3, x.4);
    }
}
