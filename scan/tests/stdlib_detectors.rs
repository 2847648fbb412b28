#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "tests fail loudly at the first unexpected value"
)]
//! The stdlib detectors against true and false positives, one case per line, without
//! git: each case is a new file whose every line counts as added. Fake credentials are
//! assembled at run time so no token-shaped literal sits in this repository.

mod support;

use contextos_core::{build, BuildOptions, Layer, PolicySource};
use contextos_scan::{self as scan};
use support::{file, rnd, rules, stdlib_detectors as detectors};

const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const HEX: &str = "0123456789abcdef";
const B32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn p(parts: &[&str]) -> String {
    parts.concat()
}

fn b64(text: &str) -> String {
    let a = B64.as_bytes();
    let mut out = String::new();
    for c in text.as_bytes().chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(a[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A Discord user id of `digits` digits (first digit not 0), base64 without padding: the
/// first segment of a bot token.
fn snowflake64(seed: u64, digits: usize) -> String {
    let id = format!(
        "{}{}",
        rnd(seed, 1, "123456789"),
        rnd(seed + 1, digits - 1, "0123456789")
    );
    b64(&id).trim_end_matches('=').to_string()
}

fn pem(kind: &str, headers: &str, seed: u64) -> String {
    let body: Vec<String> = (0..4).map(|i| rnd(seed + i, 64, B64)).collect();
    format!(
        "-----BEGIN {kind}-----\n{headers}{}\n-----END {kind}-----\n",
        body.join("\n")
    )
}

/// (expected rule, file, text): the rule must fire on line 1 (or the file for blocked files).
fn positives() -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("private-key", "k.txt", pem(&p(&["RSA PRIVATE", " KEY"]), "", 1)),
        ("private-key", "k.txt", pem(&p(&["OPENSSH PRIVATE", " KEY"]), "", 2)),
        ("private-key", "k.txt", pem(&p(&["ENCRYPTED PRIVATE", " KEY"]), "", 3)),
        (
            "private-key",
            "k.txt",
            pem(&p(&["RSA PRIVATE", " KEY"]), "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0011\n\n", 4),
        ),
        (
            "private-key",
            "k.asc",
            pem(&p(&["PGP PRIVATE", " KEY BLOCK"]), "Version: GnuPG v2\n\n", 5),
        ),
        (
            "private-key",
            "sa.json",
            format!(
                "{{\"private_key\": \"-----BEGIN {}-----\\n{}\\n{}\\n-----END PRIVATE KEY-----\\n\"}}\n",
                p(&["PRIVATE", " KEY"]),
                rnd(6, 64, B64),
                rnd(7, 64, B64)
            ),
        ),
        ("aws-access-key-id", "a.py", format!("id = \"{}{}\"\n", "AKIA", rnd(8, 16, B32))),
        ("aws-access-key-id", "a.yaml", format!("key: {}{}\n", "ASIA", rnd(9, 16, B32))),
        (
            "aws-secret-access-key",
            "a.ini",
            format!("aws_secret_access_key = {}\n", rnd(10, 40, B64)),
        ),
        ("github-token", "g.sh", format!("export GH={}_{}\n", "ghp", rnd(11, 36, AN))),
        ("github-token", "g.json", format!("{{\"t\": \"{}_{}\"}}\n", "gho", rnd(12, 36, AN))),
        ("github-token", "g.env.txt", format!("T={}_{}\n", "ghs", rnd(13, 36, AN))),
        ("github-token", "g.txt", format!("refresh {}_{}\n", "ghr", rnd(14, 76, AN))),
        (
            "github-fine-grained-pat",
            "g.go",
            format!("const t = \"{}_{}_{}\"\n", "github_pat", rnd(15, 22, AN), rnd(16, 59, AN)),
        ),
        ("gitlab-token", "c.yml", format!("token: {}-{}\n", "glpat", rnd(17, 20, URLSAFE))),
        (
            "slack-token",
            "s.js",
            format!("const s = '{}-{}-{}-{}';\n", "xoxb", "123456789012", "1234567890123", rnd(18, 24, AN)),
        ),
        (
            "slack-webhook",
            "s.md",
            format!("https://{}/services/T{}/B{}/{}\n", "hooks.slack.com", rnd(19, 9, B32), rnd(20, 9, B32), rnd(21, 24, AN)),
        ),
        ("stripe-live-key", "p.rb", format!("Stripe.api_key = '{}_{}'\n", "sk_live", rnd(22, 24, AN))),
        ("stripe-live-key", "p.rb", format!("KEY = '{}_{}'\n", "rk_live", rnd(23, 24, AN))),
        ("google-api-key", "m.kt", format!("val k = \"{}{}\"\n", "AIza", rnd(24, 35, URLSAFE))),
        (
            "openai-api-key",
            "o.py",
            format!("k = \"sk-proj-{}{}{}\"\n", rnd(25, 20, URLSAFE), "T3Blbk", p(&["FJ", &rnd(26, 20, URLSAFE)])),
        ),
        ("openai-project-key", "o.py", format!("k = \"sk-proj-{}\"\n", rnd(27, 120, URLSAFE))),
        (
            "anthropic-api-key",
            "a.ts",
            format!("const k = \"{}-api03-{}AA\";\n", "sk-ant", rnd(28, 93, URLSAFE)),
        ),
        ("npm-token", ".npmrc.txt", format!("token {}_{}\n", "npm", rnd(29, 36, AN))),
        ("pypi-token", "p.cfg", format!("password = {}-AgEIcHlwaS5vcmc{}\n", "pypi", rnd(30, 150, URLSAFE))),
        ("docker-hub-token", "d.sh", format!("echo {}_{} | docker login\n", "dckr_pat", rnd(31, 27, URLSAFE))),
        (
            "jwt",
            "j.http",
            format!(
                "Authorization: Bearer eyJ{}.eyJ{}.{}\n",
                rnd(32, 30, URLSAFE),
                rnd(33, 60, URLSAFE),
                rnd(34, 43, URLSAFE)
            ),
        ),
        (
            "database-url-password",
            "db.toml",
            format!("url = \"postgres://app:{}@db.internal:5432/app\"\n", rnd(35, 16, AN)),
        ),
        (
            "database-url-password",
            "db.yaml",
            format!("uri: mongodb+srv://svc:{}@cluster0.example.net/db\n", rnd(36, 20, AN)),
        ),
        ("sendgrid-api-key", "m.py", format!("K = 'SG.{}.{}'\n", rnd(37, 22, URLSAFE), rnd(38, 43, URLSAFE))),
        ("huggingface-token", "h.py", format!("HF = \"{}_{}\"\n", "hf", rnd(39, 34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))),
        ("digitalocean-token", "do.tf", format!("token = \"{}_v1_{}\"\n", "dop", rnd(40, 64, HEX))),
        (
            "generic-secret-assignment",
            "settings.py",
            format!("DB_PASSWORD = \"{}\"\n", rnd(41, 20, AN)),
        ),
        (
            "generic-secret-assignment",
            "app.properties",
            format!("client.secret={}\n", rnd(42, 32, AN)),
        ),
        (
            "generic-secret-assignment",
            "c.json",
            format!("{{\"apiKey\": \"{}\"}}\n", rnd(43, 32, HEX)),
        ),
        (
            "generic-secret-attribute",
            "Web.config",
            format!("  <add key=\"DbPassword\" value=\"{}\" />\n", rnd(46, 20, AN)),
        ),
        (
            "aws-secret-access-key",
            "a.ts",
            format!("export const awsSecretAccessKey: string = \"{}\";\n", rnd(49, 40, B64)),
        ),
        (
            "generic-secret-assignment",
            "a.go",
            format!("var dbPassword string = \"{}\"\n", rnd(58, 20, AN)),
        ),
        (
            "generic-secret-assignment",
            "b.rs",
            format!("pub const ADMIN_PASSWORD: &str = \"^{}~\";\n", rnd(59, 18, AN)),
        ),
        (
            "generic-secret-assignment",
            ".env.txt",
            format!("DB_PASSWORD=.{}+x\n", rnd(60, 20, AN)),
        ),
        ("netrc-password", ".netrc", format!("password {}\n", rnd(47, 20, AN))),
        (
            "private-key",
            "values.yaml",
            format!(
                "tls:\n  key: |\n    -----BEGIN RSA {}-----\n    Proc-Type: 4,ENCRYPTED\n    DEK-Info: AES-128-CBC,00112233\n\n    {}\n    -----END RSA PRIVATE KEY-----\n",
                "PRIVATE KEY",
                rnd(48, 64, B64)
            )
            .split_once("tls:\n  key: |\n")
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default(),
        ),
        (
            "slack-config-token",
            "slack.env.txt",
            format!("SLACK_CONFIG_TOKEN={}-1-{}\n", p(&["xoxe.", "xoxp"]), rnd(61, 166, AN)),
        ),
        (
            "slack-config-token",
            "slack.yaml",
            format!("refresh: {}-1-{}\n", "xoxe", rnd(62, 147, AN)),
        ),
        (
            "discord-bot-token",
            "bot.py",
            format!("DISCORD_BOT_TOKEN = \"{}.{}.{}\"\n", snowflake64(63, 18), rnd(64, 6, URLSAFE), rnd(65, 38, URLSAFE)),
        ),
        // Without a `discord` name: the first segment is a snowflake id in base64.
        (
            "discord-bot-token",
            "bot.js",
            format!("client.login('{}.{}.{}');\n", snowflake64(118, 19), rnd(119, 6, URLSAFE), rnd(120, 38, URLSAFE)),
        ),
        (
            "discord-bot-token",
            "config.json",
            format!("{{\"token\": \"{}.{}.{}\"}}\n", snowflake64(121, 17), rnd(122, 6, URLSAFE), rnd(123, 27, URLSAFE)),
        ),
        (
            "discord-client-secret",
            "discord.json",
            format!("{{\"discordClientSecret\": \"{}\"}}\n", rnd(66, 32, URLSAFE)),
        ),
        (
            "discord-client-id",
            "discord.env.txt",
            format!("DISCORD_CLIENT_ID={}\n", rnd(67, 18, "123456789")),
        ),
        (
            "discord-webhook",
            "hook.sh",
            format!("curl https://{}/api/webhooks/{}/{}\n", "discord.com", rnd(68, 18, "123456789"), rnd(69, 68, URLSAFE)),
        ),
        ("sentry-token", "ci.yml", format!("auth: {}_{}\n", "sntryu", rnd(70, 64, HEX))),
        (
            "sentry-token",
            "ci.env.txt",
            format!("SENTRY_AUTH_TOKEN={}_eyJ{}_{}\n", "sntrys", rnd(71, 120, B64), rnd(72, 43, B64)),
        ),
        ("sentry-legacy-token", "s.ini", format!("sentry_auth_token = {}\n", rnd(73, 64, HEX))),
        (
            "sentry-dsn",
            "s.py",
            format!("dsn = \"https://{}@o12345.ingest.{}/678\"\n", rnd(74, 32, HEX), "sentry.io"),
        ),
        (
            "azure-ad-client-secret",
            "appsettings.json",
            format!("{{\"ClientSecret\": \"{}8Q~{}\"}}\n", rnd(75, 3, AN), rnd(76, 34, AN)),
        ),
        (
            "generic-secret-xml-element",
            "nuget.config",
            format!("<ClearTextPassword>{}</ClearTextPassword>\n", rnd(78, 20, AN)),
        ),
        (
            "generic-secret-assignment",
            "App.java",
            format!("System.setProperty(\"SERVICE_TOKEN\", \"{}\");\n", rnd(79, 24, AN)),
        ),
        ("generic-secret-assignment", "c.php", format!("$apiKey .= '{}';\n", rnd(80, 24, AN))),
        ("generic-secret-assignment", "Makefile", format!("API_TOKEN ::= {}\n", rnd(81, 24, AN))),
        ("generic-secret-assignment", "GNUmakefile", format!("API_TOKEN :::= {}\n", rnd(82, 24, AN))),
        ("generic-secret-assignment", "a.env.txt", format!("AUTH_TOKEN={}true{}\n", rnd(83, 8, AN), rnd(84, 8, AN))),
        (
            "database-url-password",
            "db.env.txt",
            format!("DATABASE_URL=postgis://gis:{}@db:5432/maps\n", rnd(85, 16, AN)),
        ),
        (
            "private-key",
            "Key.java",
            format!(
                "String k = \"-----BEGIN RSA {}-----\\r\\n{}\\r\\n-----END RSA PRIVATE KEY-----\";\n",
                "PRIVATE KEY",
                rnd(86, 64, B64)
            ),
        ),
        (
            "private-key",
            "key.js",
            format!(
                "const key = \"-----BEGIN {}-----\\n\" +\n  \"{}\\n\" +\n  \"{}\\n\" +\n  \"-----END PRIVATE KEY-----\";\n",
                "PRIVATE KEY",
                rnd(87, 64, B64),
                rnd(88, 64, B64)
            ),
        ),
        (
            "private-key",
            "secret.yaml",
            format!("  tls.key: {}\n", b64(&pem(&p(&["RSA PRIVATE", " KEY"]), "", 89))),
        ),
        (
            "jwt",
            "secret.yaml",
            format!(
                "  session: {}\n",
                b64(&format!("eyJ{}.eyJ{}.{}", rnd(90, 30, URLSAFE), rnd(91, 60, URLSAFE), rnd(92, 43, URLSAFE)))
            ),
        ),
        (
            "generic-secret-assignment",
            "secret.yaml",
            format!("  db_password: {}\n", b64(&rnd(93, 20, AN))),
        ),
        ("jwt", "j.txt", format!("token eyJ{}.eyJ{}.\n", rnd(94, 20, URLSAFE), rnd(95, 40, URLSAFE))),
        (
            "gitlab-runner-registration-token",
            "runner.toml",
            format!("registration-token = \"{}{}\"\n", "GR1348941", rnd(111, 20, URLSAFE)),
        ),
        (
            "slack-app-token",
            "socket.env.txt",
            format!("SLACK_APP_TOKEN={}-1-A{}-{}-{}\n", "xapp", rnd(112, 10, B32), rnd(113, 13, "0123456789"), rnd(114, 64, HEX)),
        ),
        ("shopify-token", "shop.rb", format!("ShopifyAPI::Context.setup(api_key: '{}_{}')\n", "shpat", rnd(115, 32, HEX))),
        (
            "azure-storage-key",
            "app.config",
            format!(
                "DefaultEndpointsProtocol=https;AccountName=acme;{}={}==;EndpointSuffix=core.windows.net\n",
                "AccountKey",
                rnd(116, 86, B64)
            ),
        ),
        // Keywords narrowed from `wise` (in `otherwise`) still find the name's usual spellings.
        (
            "wise-api-token",
            "w.env.txt",
            format!("WISE_API_TOKEN={}-{}-{}-{}-{}\n", rnd(147, 8, HEX), rnd(148, 4, HEX), rnd(149, 4, HEX), rnd(150, 4, HEX), rnd(151, 12, HEX)),
        ),
        (
            "wise-api-token",
            "w.ts",
            format!("const wiseApiKey = \"{}-{}-{}-{}-{}\";\n", rnd(152, 8, HEX), rnd(153, 4, HEX), rnd(154, 4, HEX), rnd(155, 4, HEX), rnd(156, 12, HEX)),
        ),
        ("rust-todo", "src/lib.rs", "fn f() -> u8 { todo!() }\n".into()),
        ("php-not-implemented", "src/A.php", "throw new \\Exception('Not implemented');\n".into()),
        ("implement-me", "src/a.go", "// TODO: implement retries\n".into()),
        ("elided-code", "src/a.ts", "// ... rest of code ...\n".into()),
        (
            "generic-secret-assignment",
            "db.yml",
            format!("password: {}$&{}\n", rnd(44, 8, AN), rnd(45, 6, AN)),
        ),
    ]
}

fn negatives() -> Vec<(&'static str, String)> {
    vec![
        ("k.py", format!("if line.startswith(\"-----BEGIN RSA {}-----\"):\n    pass\n", "PRIVATE KEY")),
        ("aws.md", format!("Example: {}IOSFODNN7EXAMPLE\n", "AKIA")),
        ("aws.ini", format!("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}\n", "EXAMPLEKEY")),
        ("aws.tf", "aws_secret_access_key = var.aws_secret_access_key\n".into()),
        ("g.md", format!("Use a token like {}_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", "ghp")),
        ("s.md", format!("https://{}/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX\n", "hooks.slack.com")),
        ("p.js", format!("const stripe = Stripe('{}_{}');\n", "pk_live", rnd(50, 24, AN))),
        ("u.yaml", "api_token_id: 550e8400-e29b-41d4-a716-446655440000\n".into()),
        ("s.py", "SECRET_KEY = settings.DJANGO_SECRET\n".into()),
        ("s.py", "token = secrets.token_urlsafe(32)\n".into()),
        ("c.rb", "password: Rails.application.credentials.db_password\n".into()),
        (
            "j.md",
            format!(
                "{}.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c\n",
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
            ),
        ),
        ("db.env.txt", "DATABASE_URL=postgres://user:password@localhost:5432/db\n".into()),
        ("db.yml", "url: postgres://app:${DB_PASSWORD}@db/app\n".into()),
        ("db.yml", "url: mysql://root:<password>@127.0.0.1/app\n".into()),
        ("u.py", "request_id = \"550e8400-e29b-41d4-a716-446655440000\"\n".into()),
        ("h.txt", format!("sha256 = \"{}\"\n", rnd(51, 64, HEX))),
        ("commit.txt", format!("commit {}\n", rnd(52, 40, HEX))),
        (
            "package-lock.json",
            format!("      \"integrity\": \"sha512-{}==\"\n", rnd(53, 86, B64)),
        ),
        ("Cargo.lock", format!("checksum = \"{}\"\n", rnd(54, 64, HEX))),
        ("go.sum", format!("golang.org/x/text v0.3.0 h1:{}=\n", rnd(55, 43, B64))),
        ("blob.txt", format!("data: {}\n", rnd(56, 200, B64))),
        ("settings.py", "SECRET_KEY = os.environ[\"SECRET_KEY\"]\n".into()),
        ("config.js", "const token = process.env.GITHUB_TOKEN;\n".into()),
        ("config.yml", "password: changeme\n".into()),
        ("config.yml", "api_key: <your-api-key-here>\n".into()),
        ("config.yml", "token: \"{{ vault_token }}\"\n".into()),
        ("README.md", "Set `password = \"xxxxxxxxxxxx\"` in your config.\n".into()),
        ("views.py", "password_field = forms.CharField(widget=forms.PasswordInput)\n".into()),
        ("src/lib.rs", "let token_count = tokens.len();\n".into()),
        ("id.pub", format!("ssh-ed25519 {} me@host\n", rnd(57, 68, B64))),
        ("aws.py", format!("key = \"{}XXXXXXXXXXXXXXXX\"\n", "AKIA")),
        // Closed lengths: a GitLab token one character long or short, a truncated key.
        ("gl.yml", format!("token: {}-{}\n", "glpat", rnd(100, 19, AN))),
        ("gl.yml", format!("token: {}-{}\n", "glpat", rnd(101, 23, AN))),
        ("a.ts", format!("const k = \"{}-api03-{}\";\n", "sk-ant", rnd(102, 40, URLSAFE))),
        ("g.sh", format!("export GH={}_{}\n", "ghp", rnd(103, 30, AN))),
        // A provider's prefix under a secret's name: left to the provider's detector, which
        // knows the length (the generic rule defers).
        ("gh.env.txt", format!("GITHUB_TOKEN={}_{}\n", "ghp", rnd(144, 20, AN))),
        ("gl.json", format!("{{\"gitlabToken\": \"{}-{}\"}}\n", "glpat", rnd(145, 12, AN))),
        ("s.py", format!("STRIPE_SECRET_KEY = \"{}_{}\"\n", "sk_live", rnd(146, 10, AN))),
        // Closed lengths of the other prefixed tokens: one segment too short or too long.
        ("s.js", format!("const s = '{}-{}-{}-{}';\n", "xoxb", "123456789012", "1234567890123", rnd(120, 12, AN))),
        ("s.js", format!("const s = '{}-{}-{}-{}';\n", "xoxb", "123456789012", "1234567890123", rnd(121, 80, AN))),
        (
            "s.env.txt",
            format!("SLACK_APP_TOKEN={}-1-A{}-{}-{}\n", "xapp", rnd(122, 10, B32), rnd(123, 13, "0123456789"), rnd(124, 20, HEX)),
        ),
        ("hook.md", format!("https://{}/services/T{}/B{}/{}\n", "hooks.slack.com", rnd(125, 9, B32), rnd(126, 9, B32), rnd(127, 16, AN))),
        (
            "o.py",
            format!("k = \"sk-{}{}{}\"\n", rnd(128, 10, AN), "T3Blbk", p(&["FJ", &rnd(129, 10, AN)])),
        ),
        ("p.cfg", format!("password = {}-AgEIcHlwaS5vcmc{}\n", "pypi", rnd(130, 40, URLSAFE))),
        ("d.sh", format!("echo {}_{} | docker login\n", "dckr_pat", rnd(131, 16, URLSAFE))),
        ("d.sh", format!("echo {}_{} | docker login\n", "dckr_pat", rnd(132, 48, URLSAFE))),
        ("j.txt", format!("token eyJ{}.eyJ{}.{}\n", rnd(133, 20, URLSAFE), rnd(134, 40, URLSAFE), rnd(135, 20, URLSAFE))),
        ("r.toml", format!("token = \"{}{}\"\n", "GR1348941", rnd(136, 12, URLSAFE))),
        // Discord-shaped but not a bot token: the first segment is not a digit id in base64,
        // or the HMAC is short.
        ("bot.js", format!("client.login('M{}.{}.{}');\n", rnd(137, 23, AN), rnd(138, 6, URLSAFE), rnd(139, 38, URLSAFE))),
        ("bot.js", format!("client.login('{}.{}.{}');\n", snowflake64(140, 18), rnd(141, 6, URLSAFE), rnd(142, 20, URLSAFE))),
        ("v.txt", format!("version {}.{}.{}\n", snowflake64(143, 18), "abcdef", "x".repeat(30))),
        // Names that say token without holding one.
        ("form.html", format!("<input name=\"csrf_token\" value=\"{}\">\n", rnd(104, 40, AN))),
        ("app.py", format!("CSRF_TOKEN = \"{}\"\n", rnd(105, 40, AN))),
        ("build.gradle", "implementation 'io.jsonwebtoken:jjwt-api:0.11.5'\n".into()),
        ("pom.properties", "token.service=auth-server.internal:8443\n".into()),
        ("deploy.yml", "secret_name: projects/acme-prod/secrets/db-password/versions/3\n".into()),
        ("deploy.yml", "token_url: https://oauth2.googleapis.com/token\n".into()),
        ("deploy.yml", "api_key_name: billing-service-api-key\n".into()),
        // Masked and placeholder values.
        ("l.txt", format!("api_key = \"{}\"\n", "sk_live_####################")),
        ("l.txt", "token: XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\n".into()),
        ("l.txt", format!("{}_{}\n", "ghp", "x".repeat(36))),
        ("g.kt", format!("val k = \"{}{}\"\n", "AIza", "A".repeat(35))),
        // An Objective-C selector that happens to start like a Hugging Face token.
        ("V.m", "[self hf_initWithFrameAndStyleAndDelegateAndOptionsX:frame];\n".into()),
        ("secret.yaml", format!("  username: {}\n", b64("service-account-name"))),
        ("k.yaml", format!("  password: {}\n", b64("password123456"))),
        ("base.py", "    def run(self):\n        \"\"\"Subclasses implement this.\"\"\"\n".into()),
        ("docs.md", "TODO: implement the docs\n".into()),
        ("lint.rs", "const MSG: &str = \"avoid todo!() in commits\";\n".into()),
        // Documentation and SDK example keys (the `example_keys` list of secrets.policy).
        (
            "firebase.js",
            format!("  apiKey: \"{}\",\n", p(&["AIza", "SyDOCAbC123dEf456GhI789jKl012-MnO"])),
        ),
        (
            "firebase.ts",
            format!("const firebaseConfig = {{ apiKey: '{}' }};\n", p(&["AIza", "SyDOCAbC123dEf456GhI789jKl01-MnO"])),
        ),
        ("gcp.env.txt", format!("GOOGLE_API_KEY={}\n", p(&["AIza", "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"]))),
        (
            "map.html",
            format!(
                "<script src=\"https://maps.googleapis.com/maps/api/js?key={}&callback=initMap\"></script>\n",
                p(&["AIza", "SyB41DRUbKWJHPxaFjMAwdrzWzbVKartNGg"])
            ),
        ),
        ("pay.rb", format!("Stripe.api_key = '{}'\n", p(&["sk_", "test_4eC39HqLyjWDarjtT1zdp7dc"]))),
        ("pay.env.txt", format!("STRIPE_PUBLISHABLE_KEY={}\n", p(&["pk_", "test_TYooMQauvdEDq54NiTphI7jx"]))),
        // Placeholders in assignments.
        ("gcp.env.txt", format!("GOOGLE_API_KEY={}{}\n", "AIzaSy", "X".repeat(33))),
        ("gcp.env.txt", format!("GOOGLE_API_KEY={}...{}\n", "AIzaSy", "XXXX")),
        ("c.py", "api_key = \"your-api-key\"\n".into()),
        ("c.py", "GOOGLE_MAPS_API_KEY = \"your-google-maps-api-key-here\"\n".into()),
        ("c.env.txt", "API_KEY=<API_KEY>\n".into()),
        ("c.env.txt", "SERVICE_API_KEY=<SERVICE_API_KEY>\n".into()),
        ("c.sh", "export GITHUB_TOKEN=${GITHUB_TOKEN}\n".into()),
        ("c.sh", "export DEPLOY_TOKEN=\"${DEPLOY_TOKEN:?set it}\"\n".into()),
        ("c.yml", "token: \"{{ token }}\"\n".into()),
        ("c.yml", "api_token: \"{{ .Values.apiToken }}\"\n".into()),
        ("c.bat", "set API_TOKEN=%API_TOKEN%\n".into()),
        ("c.bat", "set GITHUB_API_TOKEN=%GITHUB_API_TOKEN%\n".into()),
        ("c.yml", "password: \"$(cat /run/secrets/db_password)\"\n".into()),
    ]
}

#[test]
fn every_positive_fires_on_its_line() {
    let d = detectors();
    let mut misses = Vec::new();
    for (rule, path, text) in positives() {
        let got = rules(&d, path, &text);
        if !got.iter().any(|(r, l)| r == rule && *l == Some(1)) {
            misses.push(format!("{rule} missed in {path}: got {got:?}"));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn an_xml_value_on_its_own_line_is_reported_there() {
    let d = detectors();
    let text = format!(
        "<server>\n  <password>\n    {}\n  </password>\n</server>\n",
        rnd(77, 20, AN)
    );
    let got = rules(&d, "settings.xml", &text);
    assert_eq!(
        got,
        [("generic-secret-xml-element".to_string(), Some(3))],
        "{text}"
    );
}

#[test]
fn a_token_without_its_checksum_is_a_warning() {
    use contextos_core::detector::Severity;
    let d = detectors();
    let random = rnd(110, 30, AN);
    let good = format!("{}_{random}{}", "ghp", checksum62(&random));
    let bad = format!("{}_{random}{}", "ghp", "000000");
    let sev = |t: &str| {
        scan::find(&d, &[file("g.sh", &format!("export GH={t}\n"))], None)
            .expect("scan")
            .into_iter()
            .map(|f| (f.rule, f.severity))
            .collect::<Vec<_>>()
    };
    assert_eq!(sev(&good), [("github-token".to_string(), Severity::Error)]);
    assert_eq!(sev(&bad), [("github-token".to_string(), Severity::Warning)]);
}

#[test]
fn a_grafana_token_without_its_checksum_is_a_warning() {
    use contextos_core::detector::Severity;
    let d = detectors();
    let key = format!("{}_{}", "glsa", rnd(117, 32, AN));
    let sum = String::from_utf8(contextos_scan::checksum::grafana_sum(key.as_bytes())).unwrap();
    let sev = |t: &str| {
        scan::find(
            &d,
            &[file("g.env.txt", &format!("GRAFANA_TOKEN={t}\n"))],
            None,
        )
        .expect("scan")
        .into_iter()
        .map(|f| (f.rule, f.severity))
        .collect::<Vec<_>>()
    };
    let rule = "grafana-service-account-token".to_string();
    assert_eq!(
        sev(&format!("{key}_{sum}")),
        [(rule.clone(), Severity::Error)]
    );
    let wrong = if sum.starts_with('0') { "1" } else { "0" };
    assert_eq!(
        sev(&format!("{key}_{wrong}{}", &sum[1..])),
        [(rule, Severity::Warning)]
    );
}

/// The detectors of one user policy file.
fn user_detectors(src: &str) -> scan::detect::Detectors {
    let policy = build(
        &[PolicySource {
            name: "t.policy".into(),
            text: src.to_string().into(),
            layer: Layer::User,
        }],
        &BuildOptions::default(),
    )
    .policy
    .expect("compiles");
    scan::detect::Detectors::new(policy.detectors.get().unwrap()).expect("prepare")
}

#[test]
fn case_sensitive_keywords_match_as_written() {
    let src = "language 1;\n@id(\"cs\")\ndetector secret \"(?i)(ntex[a-z]*)\" { keywords: [\"NTEx\"], case_sensitive: true };\n@id(\"ci\")\ndetector secret \"(?i)(odex[a-z]*)\" { keywords: [\"ODEx\"] };";
    let d = user_detectors(src);
    let got = |text: &str| rules(&d, "a.txt", text);
    assert_eq!(got("context codex\n"), [("ci".to_string(), Some(1))]);
    assert_eq!(got("NTExabc\n"), [("cs".to_string(), Some(1))]);
}

/// Detector regexes search ASCII text with Unicode mode off, and text with a non-ASCII
/// byte in both modes: a token glued to a non-ASCII letter is found (the ASCII `\b`), a
/// no-break space still separates a name from its value (the written `\s`), and a pattern
/// that needs Unicode (`\p{Greek}`) compiles and matches as written.
#[test]
fn regexes_search_ascii_text_in_ascii_mode_and_other_text_in_both() {
    let src = r#"language 1;
@id("ascii")
detector secret """\b(KEY[0-9]{8})\b""" { keywords: ["KEY"] };
@id("greek")
detector secret """(\p{Greek}{3}[0-9]{8})""" { keywords: ["αβγ"] };
@id("spaced")
detector secret """pin\s*=\s*([0-9]{8})""" { keywords: ["pin"] };
"#;
    let d = user_detectors(src);
    d.warm().expect("both regexes compile");
    let got = |text: &str| rules(&d, "a.txt", text);
    assert_eq!(got("x = éKEY12345678;\n"), [("ascii".to_string(), Some(1))]);
    assert_eq!(got("x = KEY12345678é;\n"), [("ascii".to_string(), Some(1))]);
    assert_eq!(got("x = KEY123456789;\n"), []);
    assert_eq!(got("αβγ12345678\n"), [("greek".to_string(), Some(1))]);
    assert_eq!(got("pin = 12345678\n"), [("spaced".to_string(), Some(1))]);
    assert_eq!(
        got("pin\u{a0}=\u{a0}12345678\n"),
        [("spaced".to_string(), Some(1))]
    );
}

/// Telnyx's keyword is matched as written (`KEY`, so that `key` on every line of
/// configuration does not wake its regex); its keys, which begin so, are still found.
#[test]
fn telnyx_keys_are_found_with_their_keyword_as_written() {
    let d = detectors();
    let token = p(&[
        "KEY",
        &rnd(5, 28, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
        "_",
        &rnd(6, 22, AN),
    ]);
    let got = rules(&d, "a.env", &format!("TELNYX={token}\n"));
    assert!(
        got.contains(&("telnyx-api-key".to_string(), Some(1))),
        "{got:?}"
    );
}

/// GitHub's token checksum: CRC-32 of the random part, six base62 digits.
fn checksum62(random: &str) -> String {
    let mut n = contextos_scan::checksum::crc32(random.as_bytes());
    let digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".as_bytes();
    let mut out = Vec::new();
    while n > 0 {
        out.push(digits[(n % 62) as usize]);
        n /= 62;
    }
    while out.len() < 6 {
        out.push(b'0');
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

#[test]
fn blocked_file_names_ignore_case() {
    let d = detectors();
    let got = scan::find(&d, &[file("certs/cagw_key.P12", "x")], None).expect("scan");
    assert!(got.iter().any(|f| f.rule == "private-key-file"), "{got:?}");
    let env = scan::find(&d, &[file("app/.ENV", "A=1\n")], None).expect("scan");
    assert!(env.iter().any(|f| f.rule == "env-file"), "{env:?}");
}

#[test]
fn no_negative_fires() {
    let d = detectors();
    let mut hits = Vec::new();
    for (path, text) in negatives() {
        let got = rules(&d, path, &text);
        if !got.is_empty() {
            hits.push(format!("{path}: {got:?} on {text:?}"));
        }
    }
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}

/// Secret detectors without an entropy floor, and why: structural matches (a key block's
/// header and body, a PuTTY key file header) and passwords, which people choose (a
/// placeholder among them is a stop word, not low entropy).
const NO_ENTROPY_FLOOR: [&str; 9] = [
    "private-key",
    "putty-private-key",
    "database-url-password",
    "netrc-password",
    "url-password-no-user",
    "sqlalchemy-url-password",
    "snowflake-url-password",
    "odbc-connection-password",
    "jdbc-url-password",
];

#[test]
fn every_token_detector_has_an_entropy_floor() {
    let policy = stdlib_policy();
    let missing: Vec<&str> = policy
        .detectors
        .get()
        .unwrap()
        .iter()
        .filter(|d| d.kind == contextos_core::detector::DetectorKind::Secret)
        .filter(|d| d.min_entropy.is_none())
        .map(|d| d.id.as_str())
        .filter(|id| !NO_ENTROPY_FLOOR.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "secret detectors without an entropy floor: {missing:?}"
    );
    for id in NO_ENTROPY_FLOOR {
        assert!(
            policy.detectors.get().unwrap().iter().any(|d| d.id == id),
            "{id} is exempted but no longer exists"
        );
    }
}

fn stdlib_policy() -> contextos_core::PolicySet {
    let sources: Vec<PolicySource> = contextos_stdlib::FILES
        .iter()
        .map(|(name, text)| PolicySource {
            name: name.to_string(),
            text: text.to_string().into(),
            layer: Layer::Stdlib,
        })
        .collect();
    build(&sources, &BuildOptions::default())
        .policy
        .expect("stdlib compiles")
}

#[test]
fn every_secret_detector_has_a_positive_case() {
    let policy = stdlib_policy();
    let covered: Vec<&str> = positives().iter().map(|(r, _, _)| *r).collect();
    let untested: Vec<&str> = policy
        .detectors
        .get()
        .unwrap()
        .iter()
        .filter(|d| d.kind == contextos_core::detector::DetectorKind::Secret)
        // The provider files (secrets-infra.policy, secrets-services.policy) have their own
        // per-detector tests in providers_*.rs.
        .filter(|d| !d.origin.file.starts_with("stdlib/secrets-"))
        .map(|d| d.id.as_str())
        .filter(|id| !covered.contains(id))
        .collect();
    assert!(
        untested.is_empty(),
        "secret detectors without a positive case: {untested:?}"
    );
}
