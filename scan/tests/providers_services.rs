#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "tests fail loudly at the first unexpected value"
)]
//! The service provider detectors (stdlib-policies/policies/secrets-services.policy): one
//! row per provider with a true positive and a near miss, both assembled at run time from a
//! literal prefix and a generated body, so no token-shaped literal sits in this repository.
//! A second pass reads the documented formats in tests/corpus/secret_formats/services.toml,
//! generates tokens from them and checks that the detector named there finds each format and
//! none of its near misses: the format file and the regexes are written independently, so
//! either can catch a mistake in the other.

use contextos_core::{build, BuildOptions, Layer, PolicySource};
use contextos_scan::detect::Detectors;
use contextos_scan::{self as scan, Added, ChangeStatus, ChangedFile, EntryKind};
use std::collections::BTreeSet;

const POLICY_FILE: &str = "stdlib/secrets-services.policy";

fn stdlib() -> contextos_core::PolicySet {
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

fn detectors() -> Detectors {
    let policy = stdlib();
    let d = Detectors::new(policy.detectors.get().unwrap()).expect("detectors prepare");
    d.warm().expect("every detector regex compiles");
    d
}

fn file(path: &str, text: &str) -> ChangedFile {
    ChangedFile {
        path: path.into(),
        status: ChangeStatus::Added,
        kind: EntryKind::File,
        size: text.len() as u64,
        content: Some(text.as_bytes().to_vec()),
        added: Added::All,
        oversize: false,
    }
}

/// Rules that fire on line 1 of a new file holding `text`.
fn rules_on_line_1(d: &Detectors, path: &str, text: &str) -> BTreeSet<String> {
    scan::find(d, &[file(path, text)], None)
        .expect("scan")
        .into_iter()
        .filter(|f| f.line == Some(1))
        .map(|f| f.rule)
        .collect()
}

const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LO: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
const UP: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const AL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const HEX: &str = "0123456789abcdef";
const HEXU: &str = "0123456789ABCDEF";
const DIG: &str = "0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

/// A deterministic stream of pseudo-random numbers (xorshift), one per seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn string(&mut self, len: usize, alphabet: &str) -> String {
        let a: Vec<char> = alphabet.chars().collect();
        (0..len).map(|_| a[self.below(a.len())]).collect()
    }
}

/// One piece of a token: a literal, or `n` characters drawn from an alphabet.
enum Part {
    L(&'static str),
    R(&'static str, usize),
}
use Part::{L, R};

fn assemble(parts: &[Part], rng: &mut Rng) -> String {
    parts
        .iter()
        .map(|p| match p {
            L(s) => (*s).to_string(),
            R(alphabet, n) => rng.string(*n, alphabet),
        })
        .collect()
}

/// How the row's line is written: the assignment forms secrets are committed in.
#[derive(Clone, Copy)]
enum F {
    Env,
    Py,
    Yaml,
    Json,
    Js,
    Go,
    Xml,
    Sh,
    Url,
}

fn camel(var: &str) -> String {
    let mut out = String::new();
    for (i, w) in var.split('_').enumerate() {
        let w = w.to_ascii_lowercase();
        if i == 0 {
            out.push_str(&w);
        } else {
            let mut c = w.chars();
            if let Some(first) = c.next() {
                out.push(first.to_ascii_uppercase());
                out.push_str(c.as_str());
            }
        }
    }
    out
}

/// (path, line) for `value` assigned to `var` in form `f`.
fn line(f: F, var: &str, value: &str) -> (&'static str, String) {
    let lower = var.to_ascii_lowercase();
    match f {
        F::Env => ("deploy/app.env.txt", format!("{var}={value}\n")),
        F::Py => ("app/settings.py", format!("{var} = \"{value}\"\n")),
        F::Yaml => ("config/app.yaml", format!("{lower}: {value}\n")),
        F::Json => ("config/app.json", format!("{{\"{lower}\": \"{value}\"}}\n")),
        F::Js => (
            "src/client.js",
            format!("const {} = '{value}';\n", camel(var)),
        ),
        F::Go => ("cmd/main.go", format!("\t{} := \"{value}\"\n", camel(var))),
        F::Xml => ("conf/app.xml", format!("<{var}>{value}</{var}>\n")),
        F::Sh => ("scripts/run.sh", format!("export {var}='{value}'\n")),
        F::Url => (
            "docs/notify.md",
            format!("POST to {value} when the job ends.\n"),
        ),
    }
}

struct Row {
    id: &'static str,
    var: &'static str,
    form: F,
    tp: &'static [Part],
    near: &'static [Part],
}

#[rustfmt::skip]
const ROWS: &[Row] = &[
    Row { id: "stripe-test-key", var: "STRIPE_SECRET_KEY", form: F::Env, tp: &[L("sk_test_"), R(AN, 24)], near: &[L("sk_test_"), R(AN, 20)] },
    Row { id: "stripe-webhook-secret", var: "STRIPE_WEBHOOK_SECRET", form: F::Py, tp: &[L("whsec_"), R(AN, 32)], near: &[L("whsec_"), R(AN, 28)] },
    Row { id: "square-access-token", var: "SQUARE_ACCESS_TOKEN", form: F::Yaml, tp: &[L("EAAA"), R(URLSAFE, 60)], near: &[L("EAAA"), R(URLSAFE, 56)] },
    Row { id: "square-oauth-secret", var: "SQUARE_APPLICATION_SECRET", form: F::Json, tp: &[L("sq0csp-"), R(URLSAFE, 43)], near: &[L("sq0csp-"), R(URLSAFE, 39)] },
    Row { id: "square-legacy-access-token", var: "SQUARE_TOKEN", form: F::Js, tp: &[L("sq0atp-"), R(URLSAFE, 22)], near: &[L("sq0atp-"), R(URLSAFE, 18)] },
    Row { id: "braintree-access-token", var: "BRAINTREE_ACCESS_TOKEN", form: F::Go, tp: &[L("access_token$production$"), R(LO, 16), L("$"), R(HEX, 32)], near: &[L("access_token$production$"), R(LO, 16), L("$"), R(HEX, 28)] },
    Row { id: "paddle-api-key", var: "PADDLE_API_KEY", form: F::Xml, tp: &[L("pdl_live_apikey_"), R(LO, 26), L("_"), R(AN, 22), L("_"), R(AN, 3)], near: &[L("pdl_live_apikey_"), R(LO, 20), L("_"), R(AN, 22), L("_"), R(AN, 3)] },
    Row { id: "shippo-api-token", var: "SHIPPO_API_TOKEN", form: F::Sh, tp: &[L("shippo_live_"), R(HEX, 40)], near: &[L("shippo_live_"), R(HEX, 36)] },
    Row { id: "easypost-api-key", var: "EASYPOST_API_KEY", form: F::Env, tp: &[L("EZAK"), R(HEX, 54)], near: &[L("EZAK"), R(HEX, 50)] },
    Row { id: "flutterwave-secret-key", var: "FLW_SECRET_KEY", form: F::Py, tp: &[L("FLWSECK-"), R(HEX, 32), L("-X")], near: &[L("FLWSECK-"), R(HEX, 28), L("-X")] },
    Row { id: "razorpay-key", var: "RAZORPAY_KEY_ID", form: F::Yaml, tp: &[L("rzp_live_"), R(AN, 14)], near: &[L("rzp_live_"), R(AN, 11)] },
    Row { id: "xendit-secret-key", var: "XENDIT_SECRET_KEY", form: F::Json, tp: &[L("xnd_production_"), R(AN, 50)], near: &[L("xnd_production_"), R(AN, 46)] },
    Row { id: "midtrans-server-key", var: "MIDTRANS_SERVER_KEY", form: F::Js, tp: &[L("Mid-server-"), R(URLSAFE, 24)], near: &[L("Mid-server-"), R(URLSAFE, 20)] },
    Row { id: "plaid-access-token", var: "PLAID_ACCESS_TOKEN", form: F::Go, tp: &[L("access-production-"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[L("access-production-"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 10)] },
    Row { id: "duffel-api-token", var: "DUFFEL_ACCESS_TOKEN", form: F::Xml, tp: &[L("duffel_live_"), R(URLSAFE, 43)], near: &[L("duffel_live_"), R(URLSAFE, 39)] },
    Row { id: "wise-api-token", var: "TRANSFERWISE_API_TOKEN", form: F::Sh, tp: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "lemon-squeezy-api-key", var: "LEMONSQUEEZY_API_KEY", form: F::Env, tp: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 120), L("."), R(URLSAFE, 43)], near: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 10)] },
    Row { id: "gumroad-access-token", var: "GUMROAD_ACCESS_TOKEN", form: F::Py, tp: &[R(URLSAFE, 43)], near: &[R(URLSAFE, 30)] },
    Row { id: "paymongo-secret-key", var: "PAYMONGO_SECRET_KEY", form: F::Yaml, tp: &[L("sk_live_"), R(AN, 24)], near: &[L("sk_live_"), R(AN, 12)] },
    Row { id: "pagarme-api-key", var: "PAGARME_API_KEY", form: F::Json, tp: &[L("sk_"), R(AN, 32)], near: &[L("sk_"), R(AN, 10)] },
    Row { id: "taxjar-api-token", var: "TAXJAR_API_TOKEN", form: F::Js, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "chartmogul-api-key", var: "CHARTMOGUL_API_KEY", form: F::Go, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "gocardless-access-token", var: "GOCARDLESS_ACCESS_TOKEN", form: F::Xml, tp: &[L("live_"), R(URLSAFE, 40)], near: &[L("live_"), R(URLSAFE, 36)] },
    Row { id: "mollie-api-key", var: "MOLLIE_API_KEY", form: F::Sh, tp: &[L("live_"), R(AN, 30)], near: &[L("live_"), R(AN, 26)] },
    Row { id: "checkout-secret-key", var: "CHECKOUT_SECRET_KEY", form: F::Env, tp: &[L("sk_sbox_"), R(LO, 26)], near: &[L("sk_sbox_"), R(LO, 22)] },
    Row { id: "recurly-api-key", var: "RECURLY_API_KEY", form: F::Py, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "chargebee-api-key", var: "CHARGEBEE_API_KEY", form: F::Yaml, tp: &[L("live_"), R(AN, 32)], near: &[L("live_"), R(AN, 16)] },
    Row { id: "adyen-api-key", var: "ADYEN_API_KEY", form: F::Json, tp: &[L("AQE"), R(B64, 120)], near: &[L("AQE"), R(B64, 40)] },
    Row { id: "plaid-secret", var: "PLAID_SECRET", form: F::Js, tp: &[R(HEX, 30)], near: &[R(HEX, 26)] },
    Row { id: "authorize-net-transaction-key", var: "AUTHORIZE_NET_TRANSACTION_KEY", form: F::Go, tp: &[R(AN, 16)], near: &[R(AN, 12)] },
    Row { id: "binance-api-key", var: "BINANCE_API_SECRET", form: F::Xml, tp: &[R(AN, 64)], near: &[R(AN, 60)] },
    Row { id: "kraken-api-secret", var: "KRAKEN_API_SECRET", form: F::Sh, tp: &[R(B64, 86), L("==")], near: &[R(B64, 60), L("==")] },
    Row { id: "gemini-exchange-api-key", var: "GEMINI_API_KEY", form: F::Env, tp: &[L("account-"), R(AN, 20)], near: &[L("account-"), R(AN, 16)] },
    Row { id: "bitfinex-api-key", var: "BITFINEX_API_SECRET", form: F::Py, tp: &[R(AN, 43)], near: &[R(AN, 39)] },
    Row { id: "kucoin-api-secret", var: "KUCOIN_API_SECRET", form: F::Yaml, tp: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "coinbase-api-secret", var: "COINBASE_API_SECRET", form: F::Json, tp: &[R(B64, 86), L("==")], near: &[R(B64, 20)] },
    Row { id: "mailchimp-api-key", var: "MAILCHIMP_API_KEY", form: F::Js, tp: &[R(HEX, 32), L("-us"), R(DIG, 1)], near: &[R(HEX, 30), L("-us"), R(DIG, 2)] },
    Row { id: "brevo-api-key", var: "BREVO_API_KEY", form: F::Go, tp: &[L("xkeysib-"), R(HEX, 64), L("-"), R(AN, 16)], near: &[L("xkeysib-"), R(HEX, 64), L("-"), R(AN, 12)] },
    Row { id: "mailersend-api-token", var: "MAILERSEND_API_TOKEN", form: F::Xml, tp: &[L("mlsn."), R(HEX, 64)], near: &[L("mlsn."), R(HEX, 60)] },
    Row { id: "resend-api-key", var: "RESEND_API_KEY", form: F::Sh, tp: &[L("re_"), R(AN, 8), L("_"), R(AN, 24)], near: &[L("re_"), R(AN, 8), L("_"), R(AN, 20)] },
    Row { id: "pubnub-publish-key", var: "PUBNUB_PUBLISH_KEY", form: F::Env, tp: &[L("pub-c-"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[L("pub-c-"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "pubnub-secret-key", var: "PUBNUB_SECRET_KEY", form: F::Py, tp: &[L("sec-c-"), R(AN, 48)], near: &[L("sec-c-"), R(AN, 44)] },
    Row { id: "teams-incoming-webhook", var: "TEAMS_WEBHOOK_URL", form: F::Url, tp: &[L("https://contoso.webhook.office.com/webhookb2/"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12), L("@"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12), L("/IncomingWebhook/"), R(HEX, 32), L("/"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[L("https://contoso.webhook.office.com/webhookb2/"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12), L("@"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12), L("/IncomingWebhook/"), R(HEX, 28), L("/"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)] },
    Row { id: "telegram-bot-token", var: "TELEGRAM_BOT_TOKEN", form: F::Json, tp: &[R(DIG, 8), L(":AA"), R(URLSAFE, 33)], near: &[R(DIG, 8), L(":AA"), R(URLSAFE, 29)] },
    Row { id: "intercom-access-token", var: "INTERCOM_ACCESS_TOKEN", form: F::Js, tp: &[L("dG9rOj"), R(B64, 50), L("=")], near: &[L("dG9rOj"), R(B64, 30), L("=")] },
    Row { id: "onesignal-api-key", var: "ONESIGNAL_REST_API_KEY", form: F::Go, tp: &[L("os_v2_app_"), R(LO, 106)], near: &[L("os_v2_app_"), R(LO, 60)] },
    Row { id: "telnyx-api-key", var: "TELNYX_API_KEY", form: F::Xml, tp: &[L("KEY"), R(HEXU, 32), L("_"), R(AN, 22)], near: &[L("KEY"), R(HEXU, 32), L("_"), R(AN, 16)] },
    Row { id: "twilio-auth-token", var: "TWILIO_AUTH_TOKEN", form: F::Sh, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "twilio-api-key", var: "TWILIO_API_KEY", form: F::Env, tp: &[L("SK"), R(HEX, 32)], near: &[L("SK"), R(HEX, 28)] },
    Row { id: "mailgun-api-key", var: "MAILGUN_API_KEY", form: F::Py, tp: &[L("key-"), R(HEX, 32)], near: &[L("key-"), R(HEX, 28)] },
    Row { id: "postmark-server-token", var: "POSTMARK_SERVER_TOKEN", form: F::Yaml, tp: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 10)] },
    Row { id: "sparkpost-api-key", var: "SPARKPOST_API_KEY", form: F::Json, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "mailjet-api-key", var: "MAILJET_API_SECRET", form: F::Js, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "mandrill-api-key", var: "MANDRILL_API_KEY", form: F::Go, tp: &[R(URLSAFE, 22)], near: &[R(URLSAFE, 18)] },
    Row { id: "sendbird-api-token", var: "SENDBIRD_API_TOKEN", form: F::Xml, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "line-channel-access-token", var: "LINE_CHANNEL_ACCESS_TOKEN", form: F::Sh, tp: &[R(B64, 170), L("=")], near: &[R(B64, 100), L("=")] },
    Row { id: "line-channel-secret", var: "LINE_CHANNEL_SECRET", form: F::Env, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "line-notify-token", var: "LINE_NOTIFY_TOKEN", form: F::Py, tp: &[R(AN, 43)], near: &[R(AN, 39)] },
    Row { id: "vonage-api-secret", var: "VONAGE_API_SECRET", form: F::Yaml, tp: &[R(AN, 16)], near: &[R(AN, 12)] },
    Row { id: "messagebird-api-key", var: "MESSAGEBIRD_API_KEY", form: F::Json, tp: &[R(AN, 25)], near: &[R(AN, 21)] },
    Row { id: "plivo-auth-token", var: "PLIVO_AUTH_TOKEN", form: F::Js, tp: &[R(AN, 40)], near: &[R(AN, 36)] },
    Row { id: "pusher-app-secret", var: "PUSHER_APP_SECRET", form: F::Go, tp: &[R(HEX, 20)], near: &[R(HEX, 16)] },
    Row { id: "ably-api-key", var: "ABLY_API_KEY", form: F::Xml, tp: &[R(URLSAFE, 6), L("."), R(URLSAFE, 6), L(":"), R(URLSAFE, 43)], near: &[R(URLSAFE, 6), L("."), R(URLSAFE, 6), L(":"), R(URLSAFE, 39)] },
    Row { id: "zendesk-api-token", var: "ZENDESK_API_TOKEN", form: F::Sh, tp: &[R(AN, 40)], near: &[R(AN, 36)] },
    Row { id: "freshdesk-api-key", var: "FRESHDESK_API_KEY", form: F::Env, tp: &[R(AN, 20)], near: &[R(AN, 16)] },
    Row { id: "twitch-client-secret", var: "TWITCH_CLIENT_SECRET", form: F::Py, tp: &[R(LO, 30)], near: &[R(LO, 26)] },
    Row { id: "mattermost-access-token", var: "MATTERMOST_TOKEN", form: F::Yaml, tp: &[R(LO, 26)], near: &[R(LO, 22)] },
    Row { id: "gitter-token", var: "GITTER_TOKEN", form: F::Json, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "zoom-client-secret", var: "ZOOM_CLIENT_SECRET", form: F::Js, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "zulip-api-key", var: "ZULIP_API_KEY", form: F::Go, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "webex-bot-token", var: "WEBEX_BOT_TOKEN", form: F::Xml, tp: &[R(AN, 64), L("_"), R(UP, 4), L("_"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(AN, 64), L("_"), R(UP, 4), L("_"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "mailtrap-api-token", var: "MAILTRAP_API_TOKEN", form: F::Sh, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "smtp2go-api-key", var: "SMTP2GO_API_KEY", form: F::Env, tp: &[L("api-"), R(HEXU, 32)], near: &[L("api-"), R(HEXU, 28)] },
    Row { id: "customerio-api-key", var: "CUSTOMERIO_API_KEY", form: F::Py, tp: &[R(HEX, 32)], near: &[R(HEX, 26)] },
    Row { id: "signalwire-api-token", var: "SIGNALWIRE_TOKEN", form: F::Yaml, tp: &[L("PT"), R(HEX, 48)], near: &[L("PT"), R(HEX, 44)] },
    Row { id: "pushover-token", var: "PUSHOVER_TOKEN", form: F::Json, tp: &[R(LO, 30)], near: &[R(LO, 26)] },
    Row { id: "pushbullet-token", var: "PUSHBULLET_TOKEN", form: F::Js, tp: &[L("o."), R(AN, 32)], near: &[L("o."), R(AN, 28)] },
    Row { id: "ntfy-access-token", var: "NTFY_TOKEN", form: F::Go, tp: &[L("tk_"), R(LO, 29)], near: &[L("tk_"), R(LO, 25)] },
    Row { id: "infobip-api-key", var: "INFOBIP_API_KEY", form: F::Xml, tp: &[R(HEX, 32), L("-"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 32), L("-"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "google-chat-webhook", var: "GOOGLE_CHAT_WEBHOOK_URL", form: F::Url, tp: &[L("https://chat.googleapis.com/v1/spaces/"), R(URLSAFE, 11), L("/messages?key=AIza"), R(URLSAFE, 35), L("&token="), R(URLSAFE, 43), L("%3D")], near: &[L("https://chat.googleapis.com/v1/spaces/"), R(URLSAFE, 11), L("/messages?key=AIza"), R(URLSAFE, 35), L("&token="), R(URLSAFE, 20)] },
    Row { id: "discord-webhook-url", var: "DISCORD_WEBHOOK_URL", form: F::Url, tp: &[L("https://discord.com/api/webhooks/"), R(DIG, 18), L("/"), R(URLSAFE, 68)], near: &[L("https://discord.com/api/webhooks/"), R(DIG, 18), L("/"), R(URLSAFE, 30)] },
    Row { id: "feishu-webhook", var: "FEISHU_WEBHOOK_URL", form: F::Url, tp: &[L("https://open.feishu.cn/open-apis/bot/v2/hook/"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[L("https://open.feishu.cn/open-apis/bot/v2/hook/"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "dingtalk-webhook", var: "DINGTALK_WEBHOOK_URL", form: F::Url, tp: &[L("https://oapi.dingtalk.com/robot/send?access_token="), R(HEX, 64)], near: &[L("https://oapi.dingtalk.com/robot/send?access_token="), R(HEX, 40)] },
    Row { id: "wecom-webhook", var: "WECOM_WEBHOOK_URL", form: F::Url, tp: &[L("https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key="), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[L("https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key="), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "ifttt-webhook-key", var: "IFTTT_WEBHOOK_URL", form: F::Url, tp: &[L("https://maker.ifttt.com/trigger/deploy/with/key/"), R(URLSAFE, 22)], near: &[L("https://maker.ifttt.com/trigger/deploy/with/key/"), R(URLSAFE, 12)] },
    Row { id: "agora-app-certificate", var: "AGORA_APP_CERTIFICATE", form: F::Go, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "salesforce-access-token", var: "SF_ACCESS_TOKEN", form: F::Xml, tp: &[L("00D"), R(AN, 12), L("!"), R("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._", 96)], near: &[L("00D"), R(AN, 12), L("!"), R(AN, 40)] },
    Row { id: "hubspot-private-app-token", var: "HUBSPOT_ACCESS_TOKEN", form: F::Sh, tp: &[L("pat-na1-"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[L("pat-na1-"), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 10)] },
    Row { id: "notion-integration-token", var: "NOTION_TOKEN", form: F::Env, tp: &[L("ntn_"), R(AN, 46)], near: &[L("ntn_"), R(AN, 42)] },
    Row { id: "airtable-pat", var: "AIRTABLE_TOKEN", form: F::Py, tp: &[L("pat"), R(AN, 14), L("."), R(HEX, 64)], near: &[L("pat"), R(AN, 14), L("."), R(HEX, 60)] },
    Row { id: "linear-api-key", var: "LINEAR_API_KEY", form: F::Yaml, tp: &[L("lin_api_"), R(AN, 40)], near: &[L("lin_api_"), R(AN, 36)] },
    Row { id: "linear-oauth-token", var: "LINEAR_OAUTH_TOKEN", form: F::Json, tp: &[L("lin_oauth_"), R(HEX, 64)], near: &[L("lin_oauth_"), R(HEX, 60)] },
    Row { id: "figma-pat", var: "FIGMA_TOKEN", form: F::Js, tp: &[L("figd_"), R(URLSAFE, 40)], near: &[L("figd_"), R(URLSAFE, 36)] },
    Row { id: "dropbox-short-lived-token", var: "DROPBOX_ACCESS_TOKEN", form: F::Go, tp: &[L("sl."), R(URLSAFE, 135)], near: &[L("sl."), R(URLSAFE, 60)] },
    Row { id: "contentful-pat", var: "CONTENTFUL_MANAGEMENT_TOKEN", form: F::Xml, tp: &[L("CFPAT-"), R(URLSAFE, 43)], near: &[L("CFPAT-"), R(URLSAFE, 39)] },
    Row { id: "woocommerce-api-key", var: "WOOCOMMERCE_CONSUMER_SECRET", form: F::Sh, tp: &[L("cs_"), R(HEX, 40)], near: &[L("cs_"), R(HEX, 36)] },
    Row { id: "mapbox-secret-token", var: "MAPBOX_SECRET_TOKEN", form: F::Env, tp: &[L("sk.eyJ"), R(URLSAFE, 60), L("."), R(URLSAFE, 22)], near: &[L("sk.eyJ"), R(URLSAFE, 60), L("."), R(URLSAFE, 18)] },
    Row { id: "mapbox-public-token", var: "MAPBOX_ACCESS_TOKEN", form: F::Py, tp: &[L("pk.eyJ"), R(URLSAFE, 60), L("."), R(URLSAFE, 22)], near: &[L("pk.eyJ"), R(URLSAFE, 60), L("."), R(URLSAFE, 18)] },
    Row { id: "radar-secret-key", var: "RADAR_SECRET_KEY", form: F::Yaml, tp: &[L("prj_live_sk_"), R(HEX, 40)], near: &[L("prj_live_sk_"), R(HEX, 36)] },
    Row { id: "foursquare-api-key", var: "FOURSQUARE_API_KEY", form: F::Json, tp: &[L("fsq3"), R(B64, 44)], near: &[L("fsq3"), R(B64, 40)] },
    Row { id: "arcgis-api-key", var: "ARCGIS_API_KEY", form: F::Js, tp: &[L("AAPK"), R(URLSAFE, 96)], near: &[L("AAPK"), R(URLSAFE, 40)] },
    Row { id: "twitter-bearer-token", var: "TWITTER_BEARER_TOKEN", form: F::Go, tp: &[L("AAAAAAAAAAAAAAAAAAAAA"), R("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789%", 91)], near: &[L("AAAAAAAAAAAAAAAAAAAAA"), R("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789%", 40)] },
    Row { id: "facebook-access-token", var: "FACEBOOK_ACCESS_TOKEN", form: F::Xml, tp: &[L("EAA"), R(AN, 180)], near: &[L("EAA"), R(AN, 40)] },
    Row { id: "instagram-access-token", var: "INSTAGRAM_ACCESS_TOKEN", form: F::Sh, tp: &[L("IGQV"), R(URLSAFE, 160)], near: &[L("IGQV"), R(URLSAFE, 60)] },
    Row { id: "clickup-pat", var: "CLICKUP_API_TOKEN", form: F::Env, tp: &[L("pk_"), R(DIG, 8), L("_"), R(UP, 32)], near: &[L("pk_"), R(DIG, 8), L("_"), R(UP, 28)] },
    Row { id: "typeform-pat", var: "TYPEFORM_TOKEN", form: F::Py, tp: &[L("tfp_"), R(AN, 44)], near: &[L("tfp_"), R(AN, 30)] },
    Row { id: "zapier-webhook", var: "ZAPIER_WEBHOOK_URL", form: F::Url, tp: &[L("https://hooks.zapier.com/hooks/catch/"), R(DIG, 8), L("/"), R(LO, 7), L("/")], near: &[L("https://hooks.zapier.com/hooks/catch/"), R(DIG, 8), L("/")] },
    Row { id: "frameio-token", var: "FRAMEIO_TOKEN", form: F::Json, tp: &[L("fio-u-"), R(URLSAFE, 64)], near: &[L("fio-u-"), R(URLSAFE, 60)] },
    Row { id: "adobe-client-secret", var: "ADOBE_CLIENT_SECRET", form: F::Js, tp: &[L("p8e-"), R(URLSAFE, 32)], near: &[L("p8e-"), R(URLSAFE, 28)] },
    Row { id: "amazon-mws-token", var: "MWS_AUTH_TOKEN", form: F::Go, tp: &[L("amzn.mws."), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[L("amzn.mws."), R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "hubspot-api-key", var: "HUBSPOT_API_KEY", form: F::Xml, tp: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "squarespace-api-key", var: "SQUARESPACE_API_KEY", form: F::Sh, tp: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "spotify-client-secret", var: "SPOTIFY_CLIENT_SECRET", form: F::Env, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "asana-pat", var: "ASANA_ACCESS_TOKEN", form: F::Py, tp: &[L("2/"), R(DIG, 16), L("/"), R(DIG, 16), L(":"), R(HEX, 32)], near: &[L("2/"), R(DIG, 16), L("/"), R(DIG, 16), L(":"), R(HEX, 28)] },
    Row { id: "trello-token", var: "TRELLO_TOKEN", form: F::Yaml, tp: &[L("ATTA"), R(HEX, 64), R(HEXU, 8)], near: &[L("ATTA"), R(HEX, 30)] },
    Row { id: "monday-api-token", var: "MONDAY_API_TOKEN", form: F::Json, tp: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 120), L("."), R(URLSAFE, 43)], near: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 10)] },
    Row { id: "todoist-api-token", var: "TODOIST_API_TOKEN", form: F::Js, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "box-access-token", var: "BOX_DEVELOPER_TOKEN", form: F::Go, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "dropbox-api-token", var: "DROPBOX_TOKEN", form: F::Xml, tp: &[R(URLSAFE, 64)], near: &[R(URLSAFE, 60)] },
    Row { id: "calendly-pat", var: "CALENDLY_TOKEN", form: F::Sh, tp: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 120), L("."), R(URLSAFE, 43)], near: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 10)] },
    Row { id: "smartsheet-access-token", var: "SMARTSHEET_ACCESS_TOKEN", form: F::Env, tp: &[R(AN, 37)], near: &[R(AN, 30)] },
    Row { id: "toggl-api-token", var: "TOGGL_API_TOKEN", form: F::Py, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "harvest-pat", var: "HARVEST_ACCESS_TOKEN", form: F::Yaml, tp: &[R(DIG, 7), L(".pt."), R(URLSAFE, 86)], near: &[R(DIG, 7), L(".pt."), R(URLSAFE, 40)] },
    Row { id: "coda-api-token", var: "CODA_API_TOKEN", form: F::Json, tp: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "clockify-api-key", var: "CLOCKIFY_API_KEY", form: F::Js, tp: &[R(AN, 48)], near: &[R(AN, 44)] },
    Row { id: "wrike-access-token", var: "WRIKE_ACCESS_TOKEN", form: F::Go, tp: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 120), L("."), R(URLSAFE, 43)], near: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 10)] },
    Row { id: "pipedrive-api-token", var: "PIPEDRIVE_API_TOKEN", form: F::Xml, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "zoho-oauth-token", var: "ZOHO_REFRESH_TOKEN", form: F::Sh, tp: &[L("1000."), R(HEX, 32), L("."), R(HEX, 32)], near: &[L("1000."), R(HEX, 32), L("."), R(HEX, 28)] },
    Row { id: "salesforce-consumer-key", var: "SF_CONSUMER_KEY", form: F::Env, tp: &[L("3MVG9"), R("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._", 80)], near: &[L("3MVG9"), R(AN, 40)] },
    Row { id: "hunter-api-key", var: "HUNTER_API_KEY", form: F::Py, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "clearbit-api-key", var: "CLEARBIT_API_KEY", form: F::Yaml, tp: &[L("sk_"), R(HEX, 32)], near: &[L("sk_"), R(HEX, 28)] },
    Row { id: "algolia-api-key", var: "ALGOLIA_ADMIN_KEY", form: F::Json, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "segment-public-api-token", var: "SEGMENT_API_TOKEN", form: F::Js, tp: &[L("sgp_"), R(AN, 64)], near: &[L("sgp_"), R(AN, 60)] },
    Row { id: "mixpanel-api-secret", var: "MIXPANEL_API_SECRET", form: F::Go, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "amplitude-api-key", var: "AMPLITUDE_SECRET_KEY", form: F::Xml, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "sanity-api-token", var: "SANITY_API_TOKEN", form: F::Sh, tp: &[L("sk"), R(AN, 80)], near: &[L("sk"), R(AN, 40)] },
    Row { id: "contentful-delivery-token", var: "CONTENTFUL_ACCESS_TOKEN", form: F::Env, tp: &[R(URLSAFE, 43)], near: &[R(URLSAFE, 39)] },
    Row { id: "webflow-api-token", var: "WEBFLOW_API_TOKEN", form: F::Py, tp: &[R(HEX, 64)], near: &[R(HEX, 60)] },
    Row { id: "ghost-admin-api-key", var: "GHOST_ADMIN_API_KEY", form: F::Yaml, tp: &[R(HEX, 24), L(":"), R(HEX, 64)], near: &[R(HEX, 24), L(":"), R(HEX, 60)] },
    Row { id: "storyblok-access-token", var: "STORYBLOK_TOKEN", form: F::Json, tp: &[R(AN, 22), L("tt")], near: &[R(AN, 16)] },
    Row { id: "bigcommerce-access-token", var: "BIGCOMMERCE_ACCESS_TOKEN", form: F::Js, tp: &[R(LO, 31)], near: &[R(LO, 20)] },
    Row { id: "etsy-api-key", var: "ETSY_API_KEY", form: F::Go, tp: &[R(LO, 24)], near: &[R(LO, 20)] },
    Row { id: "ebay-client-secret", var: "EBAY_CLIENT_SECRET", form: F::Xml, tp: &[L("PRD-"), R(HEX, 12), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4)], near: &[L("PRD-"), R(HEX, 12), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 3)] },
    Row { id: "shipstation-api-key", var: "SHIPSTATION_API_SECRET", form: F::Sh, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "aftership-api-key", var: "AFTERSHIP_API_KEY", form: F::Env, tp: &[L("asat_"), R(HEX, 32)], near: &[L("asat_"), R(HEX, 28)] },
    Row { id: "tomtom-api-key", var: "TOMTOM_API_KEY", form: F::Py, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "here-api-key", var: "HERE_API_KEY", form: F::Yaml, tp: &[R(URLSAFE, 43)], near: &[R(URLSAFE, 39)] },
    Row { id: "bing-maps-key", var: "BING_MAPS_KEY", form: F::Json, tp: &[R(URLSAFE, 64)], near: &[R(URLSAFE, 60)] },
    Row { id: "mapquest-api-key", var: "MAPQUEST_API_KEY", form: F::Js, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "opencage-api-key", var: "OPENCAGE_API_KEY", form: F::Go, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "locationiq-token", var: "LOCATIONIQ_TOKEN", form: F::Xml, tp: &[L("pk."), R(HEX, 32)], near: &[L("pk."), R(HEX, 28)] },
    Row { id: "geoapify-api-key", var: "GEOAPIFY_API_KEY", form: F::Sh, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "openweathermap-api-key", var: "OPENWEATHERMAP_API_KEY", form: F::Env, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "what3words-api-key", var: "WHAT3WORDS_API_KEY", form: F::Py, tp: &[R(UP, 8)], near: &[R(UP, 6)] },
    Row { id: "twitter-api-key", var: "TWITTER_API_KEY", form: F::Yaml, tp: &[R(AN, 25)], near: &[R(AN, 21)] },
    Row { id: "twitter-api-secret", var: "TWITTER_API_SECRET", form: F::Json, tp: &[R(AN, 50)], near: &[R(AN, 40)] },
    Row { id: "facebook-app-secret", var: "FACEBOOK_APP_SECRET", form: F::Js, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "linkedin-client-secret", var: "LINKEDIN_CLIENT_SECRET", form: F::Go, tp: &[R(AN, 16)], near: &[R(AN, 12)] },
    Row { id: "reddit-client-secret", var: "REDDIT_CLIENT_SECRET", form: F::Xml, tp: &[R(URLSAFE, 30)], near: &[R(URLSAFE, 20)] },
    Row { id: "mastodon-access-token", var: "MASTODON_ACCESS_TOKEN", form: F::Sh, tp: &[R(URLSAFE, 43)], near: &[R(URLSAFE, 39)] },
    Row { id: "yelp-api-key", var: "YELP_API_KEY", form: F::Env, tp: &[R(URLSAFE, 128)], near: &[R(URLSAFE, 124)] },
    Row { id: "pinterest-access-token", var: "PINTEREST_ACCESS_TOKEN", form: F::Py, tp: &[L("pina_"), R(UP, 100)], near: &[L("pina_"), R(UP, 20)] },
    Row { id: "klaviyo-private-key", var: "KLAVIYO_PRIVATE_API_KEY", form: F::Yaml, tp: &[L("pk_"), R(AN, 34)], near: &[L("pk_"), R(AN, 30)] },
    Row { id: "braze-api-key", var: "BRAZE_API_KEY", form: F::Json, tp: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "iterable-api-key", var: "ITERABLE_API_KEY", form: F::Js, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "activecampaign-api-key", var: "ACTIVECAMPAIGN_API_KEY", form: F::Go, tp: &[R(HEX, 72)], near: &[R(HEX, 56)] },
    Row { id: "getresponse-api-key", var: "GETRESPONSE_API_KEY", form: F::Xml, tp: &[R(LO, 32)], near: &[R(LO, 28)] },
    Row { id: "convertkit-api-secret", var: "CONVERTKIT_API_SECRET", form: F::Sh, tp: &[R(URLSAFE, 43)], near: &[R(URLSAFE, 30)] },
    Row { id: "drip-api-token", var: "DRIP_API_TOKEN", form: F::Env, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "mailerlite-api-token", var: "MAILERLITE_API_KEY", form: F::Py, tp: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 120), L("."), R(URLSAFE, 43)], near: &[R(HEX, 24)] },
    Row { id: "bitly-access-token", var: "BITLY_ACCESS_TOKEN", form: F::Yaml, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "rebrandly-api-key", var: "REBRANDLY_API_KEY", form: F::Json, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "eventbrite-token", var: "EVENTBRITE_TOKEN", form: F::Js, tp: &[R(UP, 20)], near: &[R(UP, 16)] },
    Row { id: "jotform-api-key", var: "JOTFORM_API_KEY", form: F::Go, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "mapillary-access-token", var: "MAPILLARY_ACCESS_TOKEN", form: F::Xml, tp: &[L("MLY|"), R(DIG, 16), L("|"), R(HEX, 32)], near: &[L("MLY|"), R(DIG, 16), L("|"), R(HEX, 28)] },
    Row { id: "optimizely-api-token", var: "OPTIMIZELY_API_TOKEN", form: F::Sh, tp: &[L("2:"), R(URLSAFE, 43)], near: &[L("2:"), R(URLSAFE, 20)] },
    Row { id: "gorgias-api-key", var: "GORGIAS_API_KEY", form: F::Env, tp: &[R(HEX, 64)], near: &[R(HEX, 60)] },
    Row { id: "helpscout-app-secret", var: "HELPSCOUT_APP_SECRET", form: F::Py, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "front-api-token", var: "FRONT_API_TOKEN", form: F::Yaml, tp: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 120), L("."), R(URLSAFE, 43)], near: &[L("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"), R(URLSAFE, 10)] },
    Row { id: "shodan-api-key", var: "SHODAN_API_KEY", form: F::Json, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "virustotal-api-key", var: "VIRUSTOTAL_API_KEY", form: F::Js, tp: &[R(HEX, 64)], near: &[R(HEX, 60)] },
    Row { id: "securitytrails-api-key", var: "SECURITYTRAILS_API_KEY", form: F::Go, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "hibp-api-key", var: "HIBP_API_KEY", form: F::Xml, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "newsapi-key", var: "NEWSAPI_KEY", form: F::Sh, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "abuseipdb-api-key", var: "ABUSEIPDB_API_KEY", form: F::Env, tp: &[R(HEX, 80)], near: &[R(HEX, 76)] },
    Row { id: "urlscan-api-key", var: "URLSCAN_API_KEY", form: F::Py, tp: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "censys-api-secret", var: "CENSYS_API_SECRET", form: F::Yaml, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "rapidapi-key", var: "RAPIDAPI_KEY", form: F::Json, tp: &[R(AN, 50)], near: &[R(AN, 46)] },
    Row { id: "unsplash-access-key", var: "UNSPLASH_ACCESS_KEY", form: F::Js, tp: &[R(URLSAFE, 43)], near: &[R(URLSAFE, 39)] },
    Row { id: "pexels-api-key", var: "PEXELS_API_KEY", form: F::Go, tp: &[R(AN, 56)], near: &[R(AN, 52)] },
    Row { id: "giphy-api-key", var: "GIPHY_API_KEY", form: F::Xml, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "vimeo-access-token", var: "VIMEO_ACCESS_TOKEN", form: F::Sh, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "flickr-api-key", var: "FLICKR_API_KEY", form: F::Env, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "imgur-client-secret", var: "IMGUR_CLIENT_SECRET", form: F::Py, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "cloudinary-url", var: "CLOUDINARY_URL", form: F::Url, tp: &[L("cloudinary://"), R(DIG, 15), L(":"), R(URLSAFE, 27), L("@"), R(LO, 8)], near: &[L("cloudinary://"), R(DIG, 15), L(":"), R(URLSAFE, 12), L("@"), R(LO, 8)] },
    Row { id: "nylas-api-key", var: "NYLAS_API_KEY", form: F::Json, tp: &[R(AN, 30)], near: &[R(AN, 24)] },
    Row { id: "lokalise-api-token", var: "LOKALISE_API_TOKEN", form: F::Js, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "crowdin-pat", var: "CROWDIN_PERSONAL_TOKEN", form: F::Go, tp: &[R(HEX, 80)], near: &[R(HEX, 76)] },
    Row { id: "transifex-api-token", var: "TRANSIFEX_API_TOKEN", form: F::Xml, tp: &[L("1/"), R(HEX, 40)], near: &[L("1/"), R(HEX, 36)] },
    Row { id: "strava-client-secret", var: "STRAVA_CLIENT_SECRET", form: F::Sh, tp: &[R(HEX, 40)], near: &[R(HEX, 36)] },
    Row { id: "lob-api-key", var: "LOB_API_KEY", form: F::Env, tp: &[L("live_"), R(HEX, 35)], near: &[L("live_"), R(HEX, 31)] },
    Row { id: "ipinfo-token", var: "IPINFO_TOKEN", form: F::Py, tp: &[R(HEX, 14)], near: &[R(HEX, 11)] },
    Row { id: "ipstack-api-key", var: "IPSTACK_ACCESS_KEY", form: F::Yaml, tp: &[R(HEX, 32)], near: &[R(HEX, 28)] },
    Row { id: "iex-cloud-token", var: "IEX_CLOUD_TOKEN", form: F::Json, tp: &[L("sk_"), R(HEX, 32)], near: &[L("sk_"), R(HEX, 28)] },
    Row { id: "polygon-api-key", var: "POLYGON_API_KEY", form: F::Js, tp: &[R(AN, 32)], near: &[R(AN, 28)] },
    Row { id: "finnhub-api-key", var: "FINNHUB_API_KEY", form: F::Go, tp: &[R(LO, 20)], near: &[R(LO, 16)] },
    Row { id: "alpha-vantage-api-key", var: "ALPHA_VANTAGE_API_KEY", form: F::Xml, tp: &[R(UP, 16)], near: &[R(UP, 12)] },
    Row { id: "coinmarketcap-api-key", var: "COINMARKETCAP_API_KEY", form: F::Sh, tp: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 12)], near: &[R(HEX, 8), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 4), L("-"), R(HEX, 9)] },
    Row { id: "etherscan-api-key", var: "ETHERSCAN_API_KEY", form: F::Env, tp: &[R(UP, 34)], near: &[R(UP, 30)] },
    Row { id: "nasdaq-data-link-api-key", var: "QUANDL_API_KEY", form: F::Py, tp: &[R(URLSAFE, 20)], near: &[R(URLSAFE, 16)] },
];

#[test]
fn every_provider_fires_on_its_true_positive() {
    let d = detectors();
    let mut misses = Vec::new();
    for (i, row) in ROWS.iter().enumerate() {
        for seed in 0..3u64 {
            let mut rng = Rng::new(1000 + i as u64 * 7 + seed);
            let value = assemble(row.tp, &mut rng);
            let (path, text) = line(row.form, row.var, &value);
            let got = rules_on_line_1(&d, path, &text);
            if !got.contains(row.id) {
                misses.push(format!(
                    "{} missed in {path}: {text:?} (got {got:?})",
                    row.id
                ));
            }
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn no_provider_fires_on_its_near_miss() {
    let d = detectors();
    let mut hits = Vec::new();
    for (i, row) in ROWS.iter().enumerate() {
        let mut rng = Rng::new(5000 + i as u64);
        let value = assemble(row.near, &mut rng);
        let (path, text) = line(row.form, row.var, &value);
        if rules_on_line_1(&d, path, &text).contains(row.id) {
            hits.push(format!("{} fired on its near miss {text:?}", row.id));
        }
    }
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}

/// A placeholder of the right shape (the body all `x`, or the documentation's
/// `<your-token>`) is not a finding.
#[test]
fn no_provider_fires_on_placeholders() {
    let d = detectors();
    let mut hits = Vec::new();
    for row in ROWS {
        let x: String = row
            .tp
            .iter()
            .map(|p| match p {
                L(s) => (*s).to_string(),
                R(_, n) => "x".repeat(*n),
            })
            .collect();
        for value in [x.as_str(), "<your-api-token>", "${SERVICE_TOKEN}"] {
            let (path, text) = line(row.form, row.var, value);
            if rules_on_line_1(&d, path, &text).contains(row.id) {
                hits.push(format!("{} fired on placeholder {text:?}", row.id));
            }
        }
    }
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}

/// Without a prefix, the provider's name alone does not make a value a credential: its
/// public ids (a form GUID, an OAuth client id, a workspace id) look the same.
#[test]
fn a_provider_name_without_a_credential_word_is_not_enough() {
    let d = detectors();
    let uuid = |rng: &mut Rng| {
        format!(
            "{}-{}-{}-{}-{}",
            rng.string(8, HEX),
            rng.string(4, HEX),
            rng.string(4, HEX),
            rng.string(4, HEX),
            rng.string(12, HEX)
        )
    };
    let mut rng = Rng::new(424_242);
    let cases = [
        (
            "hubspot-api-key",
            "HUBSPOT_FORM_GUID",
            "HUBSPOT_API_KEY",
            uuid(&mut rng),
        ),
        (
            "spotify-client-secret",
            "SPOTIFY_CLIENT_ID",
            "SPOTIFY_CLIENT_SECRET",
            rng.string(32, HEX),
        ),
        (
            "rebrandly-api-key",
            "REBRANDLY_WORKSPACE",
            "REBRANDLY_API_KEY",
            rng.string(32, HEX),
        ),
        (
            "braze-api-key",
            "BRAZE_APP_GROUP",
            "BRAZE_REST_API_KEY",
            uuid(&mut rng),
        ),
        (
            "etsy-api-key",
            "ETSY_SHOP_NAME",
            "ETSY_KEYSTRING",
            rng.string(24, LO),
        ),
        (
            "twilio-auth-token",
            "TWILIO_WORKSPACE",
            "TWILIO_AUTH_TOKEN",
            rng.string(32, HEX),
        ),
    ];
    for (id, var, named, value) in cases {
        for form in [F::Env, F::Yaml, F::Json] {
            let (path, text) = line(form, var, &value);
            assert!(
                !rules_on_line_1(&d, path, &text).contains(id),
                "{id} fired on {text:?}"
            );
            // The same value under a credential name is found.
            let (path, text) = line(form, named, &value);
            assert!(
                rules_on_line_1(&d, path, &text).contains(id),
                "{id} missed {text:?}"
            );
        }
    }
}

#[test]
fn every_service_detector_has_a_row_and_every_row_a_detector() {
    let policy = stdlib();
    let declared: BTreeSet<&str> = policy
        .detectors
        .get()
        .unwrap()
        .iter()
        .filter(|d| d.origin.file == POLICY_FILE)
        .map(|d| d.id.as_str())
        .collect();
    let rows: BTreeSet<&str> = ROWS.iter().map(|r| r.id).collect();
    assert_eq!(rows.len(), ROWS.len(), "a provider has two rows");
    let untested: Vec<_> = declared.difference(&rows).collect();
    let unknown: Vec<_> = rows.difference(&declared).collect();
    assert!(untested.is_empty(), "detectors without a row: {untested:?}");
    assert!(unknown.is_empty(), "rows without a detector: {unknown:?}");
    for d in policy
        .detectors
        .get()
        .unwrap()
        .iter()
        .filter(|d| d.origin.file == POLICY_FILE)
    {
        // A case-sensitive detector writes its keywords as the token spells them.
        assert!(
            d.case_sensitive || d.keywords.iter().all(|k| *k == k.to_ascii_lowercase()),
            "{}: keywords are lower-case literals",
            d.id
        );
    }
}

// --- the documented formats -------------------------------------------------------------

#[derive(serde::Deserialize)]
struct FormatFile {
    #[serde(default)]
    format: Vec<Format>,
    #[serde(default)]
    near_miss: Vec<NearMiss>,
}

#[derive(serde::Deserialize)]
struct Format {
    family: String,
    category: String,
    detector: String,
    doc: String,
    variable: String,
    parts: Vec<FormatPart>,
}

#[derive(serde::Deserialize)]
struct NearMiss {
    detector: String,
    parts: Vec<FormatPart>,
}

#[derive(serde::Deserialize)]
struct FormatPart {
    lit: Option<String>,
    set: Option<String>,
    chars: Option<String>,
    min: Option<usize>,
    max: Option<usize>,
}

fn named_set(name: &str) -> &'static str {
    match name {
        "alnum" | "base62" => AN,
        "alnum_lower" => LO,
        "alnum_upper" => UP,
        "alpha" => AL,
        "hex" => HEX,
        "hex_upper" => HEXU,
        "digits" => DIG,
        "base64" => B64,
        "base64url" => URLSAFE,
        other => panic!("unknown set {other}"),
    }
}

fn generate(parts: &[FormatPart], rng: &mut Rng) -> String {
    let mut out = String::new();
    for p in parts {
        if let Some(lit) = &p.lit {
            out.push_str(lit);
            continue;
        }
        let alphabet = match (&p.set, &p.chars) {
            (Some(s), None) => named_set(s).to_string(),
            (None, Some(c)) => c.clone(),
            _ => panic!("a part is a lit, a set or chars"),
        };
        let (min, max) = (p.min.expect("min"), p.max.expect("max"));
        assert!(min <= max && max > 0, "bad bounds {min}..{max}");
        let n = min + rng.below(max - min + 1);
        out.push_str(&rng.string(n, &alphabet));
    }
    out
}

fn formats() -> FormatFile {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/corpus/secret_formats/services.toml"
    );
    let text = std::fs::read_to_string(path).expect("services.toml");
    toml::from_str(&text).expect("services.toml parses")
}

#[test]
fn documented_formats_are_found_and_their_near_misses_are_not() {
    let d = detectors();
    let ff = formats();
    let declared: BTreeSet<String> = stdlib()
        .detectors
        .get()
        .unwrap()
        .iter()
        .filter(|d| d.origin.file == POLICY_FILE)
        .map(|d| d.id.clone())
        .collect();
    let categories = [
        "cloud",
        "vcs",
        "ci",
        "payment",
        "ai",
        "messaging",
        "database",
        "observability",
        "identity",
        "saas",
        "other",
    ];
    let mut problems = Vec::new();
    for (i, f) in ff.format.iter().enumerate() {
        assert!(categories.contains(&f.category.as_str()), "{}", f.category);
        assert!(f.doc.starts_with("https://"), "{}: doc {}", f.family, f.doc);
        assert!(
            f.family == f.family.to_ascii_lowercase(),
            "family {}",
            f.family
        );
        if !declared.contains(&f.detector) {
            problems.push(format!("format names unknown detector {}", f.detector));
            continue;
        }
        for seed in 0..4u64 {
            let mut rng = Rng::new(90_000 + i as u64 * 11 + seed);
            let value = generate(&f.parts, &mut rng);
            let form = [F::Env, F::Py, F::Yaml, F::Json][seed as usize];
            let (path, text) = line(form, &f.variable, &value);
            if !rules_on_line_1(&d, path, &text).contains(&f.detector) {
                problems.push(format!("{} missed {text:?}", f.detector));
            }
        }
    }
    for (i, n) in ff.near_miss.iter().enumerate() {
        let mut rng = Rng::new(70_000 + i as u64);
        let value = generate(&n.parts, &mut rng);
        // The near miss sits where its provider's token would: after its variable.
        let var = ff
            .format
            .iter()
            .find(|f| f.detector == n.detector)
            .map_or("SERVICE_TOKEN", |f| f.variable.as_str());
        let (path, text) = line(F::Env, var, &value);
        if rules_on_line_1(&d, path, &text).contains(&n.detector) {
            problems.push(format!("{} fired on near miss {text:?}", n.detector));
        }
    }
    let with_format: BTreeSet<&str> = ff.format.iter().map(|f| f.detector.as_str()).collect();
    for id in &declared {
        if !with_format.contains(id.as_str()) {
            problems.push(format!("{id} has no documented format"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
