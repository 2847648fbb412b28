#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "tests fail loudly at the first unexpected value"
)]
//! The infrastructure provider detectors (stdlib/secrets-infra.policy): for each one a fake
//! credential in a realistic line must be reported by that detector, and a near miss (too
//! short, wrong alphabet, placeholder) must not. The formats file
//! tests/corpus/secret_formats/infra.toml, written from vendor documentation, is checked
//! against the same detectors. Fakes are assembled at run time from a prefix and a generated
//! body, so no token-shaped literal sits in this repository.

use contextos_core::{build, BuildOptions, Layer, PolicySource};
use contextos_scan::detect::Detectors;
mod support;

use std::collections::BTreeSet;
use std::sync::OnceLock;
use support::{rnd, rules};

const POLICY: &str = "stdlib/secrets-infra.policy";
const FORMATS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/corpus/secret_formats/infra.toml"
);

const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const AN_L: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
const AN_U: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const ALPHA: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const HEX: &str = "0123456789abcdef";
const HEX_U: &str = "0123456789ABCDEF";
const DIG: &str = "0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

/// A piece of a fake token: literal text, or `n` characters drawn from an alphabet.
#[derive(Clone, Copy)]
enum Part {
    L(&'static str),
    S(&'static str, usize),
}
use Part::{L, S};

/// One provider: the line a fake sits in (`{t}` marks it), the true positive and a near miss.
struct Row {
    id: &'static str,
    path: &'static str,
    line: &'static str,
    tp: &'static [Part],
    near: &'static [Part],
}

const ROWS: &[Row] = &[
    Row { id: "groq-api-key", path: ".env", line: "GROQ_API_KEY={t}", tp: &[L("gsk_"), S(AN, 52)], near: &[L("gsk_"), S(AN, 30)] },
    Row { id: "xai-api-key", path: "config.yaml", line: "xai_api_key: \"{t}\"", tp: &[L("xai-"), S(AN, 80)], near: &[L("xai-"), S(AN, 40)] },
    Row { id: "replicate-api-token", path: "settings.json", line: "  \"replicateApiToken\": \"{t}\",", tp: &[L("r8_"), S(AN, 37)], near: &[L("r8_"), S(AN, 30)] },
    Row { id: "elevenlabs-api-key", path: "app.py", line: "ELEVENLABS_API_KEY = \"{t}\"", tp: &[L("sk_"), S(HEX, 48)], near: &[L("sk_"), S(HEX, 40)] },
    Row { id: "elevenlabs-api-key-legacy", path: "deploy.sh", line: "export ELEVENLABS_API_KEY='{t}'", tp: &[S(HEX, 32)], near: &[S(HEX, 28)] },
    Row { id: "nvidia-api-key", path: "main.go", line: "\tnvidiaApiKey := \"{t}\"", tp: &[L("nvapi-"), S(B64URL, 64)], near: &[L("nvapi-"), S(B64URL, 40)] },
    Row { id: "perplexity-api-key", path: "config.ts", line: "export const perplexityApiKey = \"{t}\";", tp: &[L("pplx-"), S(AN, 48)], near: &[L("pplx-"), S(AN, 32)] },
    Row { id: "openrouter-api-key", path: "main.tf", line: "  openrouter_api_key = \"{t}\"", tp: &[L("sk-or-v1-"), S(HEX, 64)], near: &[L("sk-or-v1-"), S(HEX, 48)] },
    Row { id: "langsmith-api-key", path: ".env", line: "LANGSMITH_API_KEY={t}", tp: &[L("lsv2_pt_"), S(HEX, 32), L("_"), S(HEX, 10)], near: &[L("lsv2_pt_"), S(HEX, 32), L("_"), S(HEX, 6)] },
    Row { id: "pinecone-api-key", path: "config.yaml", line: "pinecone_api_key: \"{t}\"", tp: &[L("pcsk_"), S(AN, 6), L("_"), S(AN, 63)], near: &[L("pcsk_"), S(AN, 6), L("_"), S(AN, 30)] },
    Row { id: "pinecone-api-key-legacy", path: "settings.json", line: "  \"pineconeApiKey\": \"{t}\",", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "langfuse-secret-key", path: "app.py", line: "LANGFUSE_SECRET_KEY = \"{t}\"", tp: &[L("sk-lf-"), S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[L("sk-lf-"), S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "tavily-api-key", path: "deploy.sh", line: "export TAVILY_API_KEY='{t}'", tp: &[L("tvly-dev-"), S(AN, 32)], near: &[L("tvly-dev-"), S(AN, 20)] },
    Row { id: "cerebras-api-key", path: "main.go", line: "\tcerebrasApiKey := \"{t}\"", tp: &[L("csk-"), S(AN_L, 48)], near: &[L("csk-"), S(AN_L, 30)] },
    Row { id: "jina-api-key", path: "config.ts", line: "export const jinaApiKey = \"{t}\";", tp: &[L("jina_"), S(B64URL, 60)], near: &[L("jina_"), S(B64URL, 40)] },
    Row { id: "huggingface-org-token", path: "main.tf", line: "  hf_org_token = \"{t}\"", tp: &[L("api_org_"), S(ALPHA, 34)], near: &[L("api_org_"), S(ALPHA, 20)] },
    Row { id: "helicone-api-key", path: ".env", line: "HELICONE_API_KEY={t}", tp: &[L("sk-helicone-"), S(AN_L, 7), L("-"), S(AN_L, 7), L("-"), S(AN_L, 7), L("-"), S(AN_L, 7)], near: &[L("sk-helicone-"), S(AN_L, 7), L("-"), S(AN_L, 7)] },
    Row { id: "runpod-api-key", path: "config.yaml", line: "runpod_api_key: \"{t}\"", tp: &[L("rpa_"), S(AN_U, 44)], near: &[L("rpa_"), S(AN_U, 20)] },
    Row { id: "neptune-api-token", path: "settings.json", line: "  \"neptuneApiToken\": \"{t}\",", tp: &[L("eyJhcGlfYWRkcmVzcyI6"), S(B64, 120)], near: &[L("eyJhcGlfYWRkcmVzcyI6"), S(B64, 30)] },
    Row { id: "aws-bedrock-api-key", path: "app.py", line: "AWS_BEARER_TOKEN_BEDROCK = \"{t}\"", tp: &[L("ABSKQmVkcm9ja0FQSUtleS"), S(B64, 110)], near: &[L("ABSKQmVkcm9ja0FQSUtleS"), S(B64, 20)] },
    Row { id: "aws-bedrock-short-term-key", path: "deploy.sh", line: "export AWS_BEARER_TOKEN_BEDROCK='{t}'", tp: &[L("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"), S(B64, 400)], near: &[L("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"), S(B64, 40)] },
    Row { id: "deepseek-api-key", path: "main.go", line: "\tdeepseekApiKey := \"{t}\"", tp: &[L("sk-"), S(HEX, 32)], near: &[L("sk-"), S(HEX, 24)] },
    Row { id: "mistral-api-key", path: "config.ts", line: "export const mistralApiKey = \"{t}\";", tp: &[S(AN, 32)], near: &[S(AN, 24)] },
    Row { id: "cohere-api-key", path: "main.tf", line: "  cohere_api_key = \"{t}\"", tp: &[S(AN, 40)], near: &[S(AN, 30)] },
    Row { id: "together-api-key", path: ".env", line: "TOGETHER_API_KEY={t}", tp: &[L("tgp_v1_"), S(B64URL, 43)], near: &[L("tgp_v1_"), S(B64URL, 20)] },
    Row { id: "together-api-key-legacy", path: "config.yaml", line: "together_api_key: \"{t}\"", tp: &[S(HEX, 64)], near: &[S(HEX, 48)] },
    Row { id: "fireworks-api-key", path: "settings.json", line: "  \"fireworksApiKey\": \"{t}\",", tp: &[L("fw_"), S(AN, 24)], near: &[L("fw_"), S(AN, 16)] },
    Row { id: "stability-api-key", path: "app.py", line: "STABILITY_API_KEY = \"{t}\"", tp: &[L("sk-"), S(AN, 48)], near: &[L("sk-"), S(AN, 32)] },
    Row { id: "voyage-api-key", path: "deploy.sh", line: "export VOYAGE_API_KEY='{t}'", tp: &[L("pa-"), S(B64URL, 43)], near: &[L("pa-"), S(B64URL, 30)] },
    Row { id: "deepgram-api-key", path: "main.go", line: "\tdeepgramApiKey := \"{t}\"", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "clarifai-pat", path: "config.ts", line: "export const clarifaiPat = \"{t}\";", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "wandb-api-key", path: "main.tf", line: "  wandb_api_key = \"{t}\"", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "assemblyai-api-key", path: ".env", line: "ASSEMBLYAI_API_KEY={t}", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "azure-openai-api-key", path: "config.yaml", line: "azure_openai_api_key: \"{t}\"", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "modal-token-secret", path: "settings.json", line: "  \"modalTokenSecret\": \"{t}\",", tp: &[L("as-"), S(AN, 22)], near: &[L("as-"), S(AN, 14)] },
    Row { id: "baseten-api-key", path: "app.py", line: "BASETEN_API_KEY = \"{t}\"", tp: &[S(AN, 8), L("."), S(AN, 32)], near: &[S(AN, 8), L("."), S(AN, 20)] },
    Row { id: "alibaba-access-key-id", path: "deploy.sh", line: "export ALIBABA_CLOUD_ACCESS_KEY_ID='{t}'", tp: &[L("LTAI"), S(AN, 20)], near: &[L("LTAI"), S(AN, 8)] },
    Row { id: "alibaba-access-key-secret", path: "main.go", line: "\talibabaCloudAccessKeySecret := \"{t}\"", tp: &[S(AN, 30)], near: &[S(AN, 22)] },
    Row { id: "tencent-secret-id", path: "config.ts", line: "export const tencentcloudSecretId = \"{t}\";", tp: &[L("AKID"), S(AN, 32)], near: &[L("AKID"), S(AN, 20)] },
    Row { id: "tencent-secret-key", path: "main.tf", line: "  tencentcloud_secret_key = \"{t}\"", tp: &[S(AN, 32)], near: &[S(AN, 24)] },
    Row { id: "google-oauth-client-secret", path: ".env", line: "GOOGLE_CLIENT_SECRET={t}", tp: &[L("GOCSPX-"), S(B64URL, 28)], near: &[L("GOCSPX-"), S(B64URL, 16)] },
    Row { id: "google-oauth-access-token", path: "config.yaml", line: "google_access_token: \"{t}\"", tp: &[L("ya29.a0"), S(B64URL, 160)], near: &[L("ya29.a0"), S(B64URL, 20)] },
    Row { id: "gcp-service-account-key-id", path: "service-account.json", line: "  \"private_key_id\": \"{t}\",", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "azure-devops-pat", path: "app.py", line: "AZURE_DEVOPS_PAT = \"{t}\"", tp: &[S(AN, 76), L("AZDO"), S(AN, 4)], near: &[S(AN, 60), L("AZDO"), S(AN, 4)] },
    Row { id: "azure-devops-pat-legacy", path: "deploy.sh", line: "export AZURE_DEVOPS_PAT='{t}'", tp: &[S("abcdefghijklmnopqrstuvwxyz234567", 52)], near: &[S("abcdefghijklmnopqrstuvwxyz234567", 40)] },
    Row { id: "azure-sas-token", path: "main.go", line: "\tazureStorageSasUrl := \"{t}\"", tp: &[L("sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&spr=https&sig="), S(B64, 43), L("%3D")], near: &[L("sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&spr=https&sig="), S(B64, 20)] },
    Row { id: "azure-shared-access-key", path: "config.ts", line: "export const azureServicebusConnectionString = \"{t}\";", tp: &[L("Endpoint=sb://ns1.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey="), S(B64, 43), L("=")], near: &[L("Endpoint=sb://ns1.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey="), S(B64, 30), L("=")] },
    Row { id: "ibm-cloud-api-key", path: "main.tf", line: "  ibm_cloud_api_key = \"{t}\"", tp: &[S(B64URL, 44)], near: &[S(B64URL, 30)] },
    Row { id: "cloudflare-api-token", path: ".env", line: "CLOUDFLARE_API_TOKEN={t}", tp: &[S(B64URL, 40)], near: &[S(B64URL, 32)] },
    Row { id: "cloudflare-global-api-key", path: "config.yaml", line: "cloudflare_api_key: \"{t}\"", tp: &[S(HEX, 37)], near: &[S(HEX, 32)] },
    Row { id: "cloudflare-origin-ca-key", path: "settings.json", line: "  \"cloudflareOriginCaKey\": \"{t}\",", tp: &[L("v1.0-"), S(HEX, 24), L("-"), S(HEX, 146)], near: &[L("v1.0-"), S(HEX, 24), L("-"), S(HEX, 100)] },
    Row { id: "heroku-api-key", path: "app.py", line: "HEROKU_API_KEY = \"{t}\"", tp: &[L("HRKU-AA"), S(B64URL, 58)], near: &[L("HRKU-AA"), S(B64URL, 30)] },
    Row { id: "heroku-api-key-legacy", path: "deploy.sh", line: "export HEROKU_API_KEY='{t}'", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "flyio-token", path: "main.go", line: "\tflyApiToken := \"{t}\"", tp: &[L("FlyV1 fm2_"), S(B64, 200)], near: &[L("FlyV1 fm2_"), S(B64, 40)] },
    Row { id: "vercel-token", path: "config.ts", line: "export const vercelToken = \"{t}\";", tp: &[L("vcp_"), S(AN, 56)], near: &[L("vcp_"), S(AN, 16)] },
    Row { id: "vercel-token-legacy", path: "main.tf", line: "  vercel_token = \"{t}\"", tp: &[S(AN, 24)], near: &[S(AN, 18)] },
    Row { id: "netlify-token", path: ".env", line: "NETLIFY_AUTH_TOKEN={t}", tp: &[L("nfp_"), S(AN, 36)], near: &[L("nfp_"), S(AN, 20)] },
    Row { id: "netlify-token-legacy", path: "config.yaml", line: "netlify_auth_token: \"{t}\"", tp: &[S(B64URL, 43)], near: &[S(B64URL, 30)] },
    Row { id: "supabase-personal-token", path: "settings.json", line: "  \"supabaseAccessToken\": \"{t}\",", tp: &[L("sbp_"), S(HEX, 40)], near: &[L("sbp_"), S(HEX, 30)] },
    Row { id: "supabase-secret-key", path: "app.py", line: "SUPABASE_SECRET_KEY = \"{t}\"", tp: &[L("sb_secret_"), S(B64URL, 22), L("_"), S(AN, 8)], near: &[L("sb_secret_"), S(B64URL, 12)] },
    Row { id: "scaleway-access-key", path: "deploy.sh", line: "export SCW_ACCESS_KEY='{t}'", tp: &[L("SCW"), S(AN_U, 17)], near: &[L("SCW"), S(AN_U, 10)] },
    Row { id: "scaleway-secret-key", path: "main.go", line: "\tscwSecretKey := \"{t}\"", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "vultr-api-key", path: "config.ts", line: "export const vultrApiKey = \"{t}\";", tp: &[S(AN_U, 36)], near: &[S(AN_U, 28)] },
    Row { id: "linode-token", path: "main.tf", line: "  linode_token = \"{t}\"", tp: &[S(HEX, 64)], near: &[S(HEX, 48)] },
    Row { id: "hetzner-cloud-token", path: ".env", line: "HCLOUD_TOKEN={t}", tp: &[S(AN, 64)], near: &[S(AN, 48)] },
    Row { id: "tailscale-key", path: "config.yaml", line: "ts_authkey: \"{t}\"", tp: &[L("tskey-auth-k"), S(AN, 12), L("CNTRL-"), S(AN, 33)], near: &[L("tskey-auth-k"), S(AN, 12), L("CNTRL-"), S(AN, 10)] },
    Row { id: "infura-url-key", path: "settings.json", line: "  \"infuraUrl\": \"{t}\",", tp: &[L("https://mainnet.infura.io/v3/"), S(HEX, 32)], near: &[L("https://mainnet.infura.io/v3/"), S(HEX, 20)] },
    Row { id: "infura-api-key", path: "app.py", line: "INFURA_API_KEY = \"{t}\"", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "alchemy-url-key", path: "deploy.sh", line: "export ALCHEMY_URL='{t}'", tp: &[L("https://eth-mainnet.g.alchemy.com/v2/"), S(B64URL, 32)], near: &[L("https://eth-mainnet.g.alchemy.com/v2/"), S(B64URL, 20)] },
    Row { id: "alchemy-api-key", path: "main.go", line: "\talchemyApiKey := \"{t}\"", tp: &[S(B64URL, 32)], near: &[S(B64URL, 24)] },
    Row { id: "cloudsmith-api-key", path: "config.ts", line: "export const cloudsmithApiKey = \"{t}\";", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "terraform-cloud-token", path: "main.tf", line: "  tfe_token = \"{t}\"", tp: &[S(AN, 14), L(".atlasv1."), S(B64URL, 67)], near: &[S(AN, 14), L(".atlasv1."), S(B64URL, 30)] },
    Row { id: "vault-token", path: ".env", line: "VAULT_TOKEN={t}", tp: &[L("hvs."), S(B64URL, 90)], near: &[L("hvs."), S(B64URL, 12)] },
    Row { id: "vault-token-legacy", path: "config.yaml", line: "vault_token: \"{t}\"", tp: &[L("s."), S(AN, 24)], near: &[L("s."), S(AN, 16)] },
    Row { id: "pulumi-access-token", path: "settings.json", line: "  \"pulumiAccessToken\": \"{t}\",", tp: &[L("pul-"), S(HEX, 40)], near: &[L("pul-"), S(HEX, 30)] },
    Row { id: "doppler-token", path: "app.py", line: "DOPPLER_TOKEN = \"{t}\"", tp: &[L("dp.st."), S(AN, 43)], near: &[L("dp.st."), S(AN, 30)] },
    Row { id: "render-api-key", path: "deploy.sh", line: "export RENDER_API_KEY='{t}'", tp: &[L("rnd_"), S(AN, 32)], near: &[L("rnd_"), S(AN, 20)] },
    Row { id: "railway-token", path: "main.go", line: "\trailwayToken := \"{t}\"", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "openshift-token", path: "config.ts", line: "export const openshiftToken = \"{t}\";", tp: &[L("sha256~"), S(B64URL, 43)], near: &[L("sha256~"), S(B64URL, 30)] },
    Row { id: "aws-session-token", path: "main.tf", line: "  aws_session_token = \"{t}\"", tp: &[L("IQoJb3JpZ2luX2Vj"), S(B64, 300)], near: &[L("IQoJb3JpZ2luX2Vj"), S(B64, 40)] },
    Row { id: "databricks-token", path: ".env", line: "DATABRICKS_TOKEN={t}", tp: &[L("dapi"), S(HEX, 32)], near: &[L("dapi"), S(HEX, 24)] },
    Row { id: "databricks-oauth-secret", path: "config.yaml", line: "databricks_client_secret: \"{t}\"", tp: &[L("dose"), S(HEX, 32)], near: &[L("dose"), S(HEX, 24)] },
    Row { id: "docker-swarm-join-token", path: "settings.json", line: "  \"swarmJoinToken\": \"{t}\",", tp: &[L("SWMTKN-1-"), S(AN_L, 50), L("-"), S(AN_L, 25)], near: &[L("SWMTKN-1-"), S(AN_L, 50), L("-"), S(AN_L, 10)] },
    Row { id: "kubernetes-bootstrap-token", path: "join.sh", line: "kubeadm join 10.0.0.10:6443 --token {t} --discovery-token-ca-cert-hash sha256:0011", tp: &[S(AN_L, 6), L("."), S(AN_L, 16)], near: &[S(AN_L, 6), L("."), S(AN_L, 10)] },
    Row { id: "rancher-api-token", path: "deploy.sh", line: "export RANCHER_TOKEN='{t}'", tp: &[L("token-"), S(AN_L, 5), L(":"), S(AN_L, 54)], near: &[L("token-"), S(AN_L, 5), L(":"), S(AN_L, 30)] },
    Row { id: "portainer-access-token", path: "main.go", line: "\tportainerToken := \"{t}\"", tp: &[L("ptr_"), S(B64, 43), L("=")], near: &[L("ptr_"), S(B64, 20)] },
    Row { id: "hashicorp-acl-token", path: "config.ts", line: "export const consulHttpToken = \"{t}\";", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "fastly-api-token", path: "main.tf", line: "  fastly_api_token = \"{t}\"", tp: &[S(B64URL, 32)], near: &[S(B64URL, 24)] },
    Row { id: "akamai-edgegrid-token", path: ".env", line: "AKAMAI_CLIENT_TOKEN={t}", tp: &[L("akab-"), S(AN_L, 16), L("-"), S(AN_L, 16)], near: &[L("akab-"), S(AN_L, 16), L("-"), S(AN_L, 8)] },
    Row { id: "backblaze-application-key", path: "config.yaml", line: "b2_application_key: \"{t}\"", tp: &[L("K005"), S(AN, 27)], near: &[L("K005"), S(AN, 15)] },
    Row { id: "ovh-application-secret", path: "settings.json", line: "  \"ovhApplicationSecret\": \"{t}\",", tp: &[S(AN, 32)], near: &[S(AN, 24)] },
    Row { id: "wireguard-private-key", path: "wg0.conf", line: "PrivateKey = {t}", tp: &[S(B64, 42), L("A=")], near: &[S(B64, 30), L("A=")] },
    Row { id: "atlassian-api-token", path: "deploy.sh", line: "export BITBUCKET_API_TOKEN='{t}'", tp: &[L("ATATT3xFfGF0"), S(B64URL, 171), L("="), S(HEX_U, 8)], near: &[L("ATATT3xFfGF0"), S(B64URL, 40)] },
    Row { id: "bitbucket-app-password", path: "main.go", line: "\tbitbucketAppPassword := \"{t}\"", tp: &[L("ATBB"), S(AN, 24), S(HEX_U, 8)], near: &[L("ATBB"), S(AN, 16)] },
    Row { id: "bitbucket-client-secret", path: "config.ts", line: "export const bitbucketClientSecret = \"{t}\";", tp: &[S(B64URL, 32)], near: &[S(B64URL, 24)] },
    Row { id: "github-oauth-client-secret", path: "main.tf", line: "  github_client_secret = \"{t}\"", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "gitea-token", path: ".env", line: "GITEA_TOKEN={t}", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "sourcegraph-token", path: "config.yaml", line: "src_access_token: \"{t}\"", tp: &[L("sgp_"), S(HEX, 16), L("_"), S(HEX, 40)], near: &[L("sgp_"), S(HEX, 16), L("_"), S(HEX, 20)] },
    Row { id: "sourcegraph-token-legacy", path: "settings.json", line: "  \"srcAccessToken\": \"{t}\",", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "nuget-api-key", path: "app.py", line: "NUGET_API_KEY = \"{t}\"", tp: &[L("oy2"), S(AN_L, 43)], near: &[L("oy2"), S(AN_L, 30)] },
    Row { id: "crates-io-token", path: "deploy.sh", line: "export CARGO_REGISTRY_TOKEN='{t}'", tp: &[L("cio"), S(AN, 32)], near: &[L("cio"), S(AN, 24)] },
    Row { id: "rubygems-api-key", path: "main.go", line: "\tgemHostApiKey := \"{t}\"", tp: &[L("rubygems_"), S(HEX, 48)], near: &[L("rubygems_"), S(HEX, 32)] },
    Row { id: "packagecloud-token", path: "config.ts", line: "export const packagecloudToken = \"{t}\";", tp: &[S(HEX, 48)], near: &[S(HEX, 32)] },
    Row { id: "gradle-plugin-portal-key", path: "main.tf", line: "  gradle_publish_secret = \"{t}\"", tp: &[S(AN, 32)], near: &[S(AN, 24)] },
    Row { id: "jfrog-api-key", path: ".env", line: "ARTIFACTORY_API_KEY={t}", tp: &[L("AKCp"), S(AN, 69)], near: &[L("AKCp"), S(AN, 40)] },
    Row { id: "jfrog-reference-token", path: "config.yaml", line: "jfrog_access_token: \"{t}\"", tp: &[L("cmVmdGtuOjAxOj"), S(AN, 50)], near: &[L("cmVmdGtuOjAxOj"), S(AN, 30)] },
    Row { id: "quay-robot-token", path: "settings.json", line: "  \"quayRobotToken\": \"{t}\",", tp: &[S(AN_U, 64)], near: &[S(AN_U, 40)] },
    Row { id: "docker-registry-auth", path: "config.json", line: "      \"auth\": \"{t}\"", tp: &[S(B64, 40), L("==")], near: &[S(B64, 12)] },
    Row { id: "npmrc-auth-token", path: ".npmrc", line: "//registry.npmjs.org/:_authToken={t}", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8)] },
    Row { id: "clojars-token", path: "main.go", line: "\tclojarsPassword := \"{t}\"", tp: &[L("CLOJARS_"), S(AN_L, 60)], near: &[L("CLOJARS_"), S(AN_L, 40)] },
    Row { id: "hex-pm-api-key", path: "config.ts", line: "export const hexApiKey = \"{t}\";", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "gemfury-token", path: "main.tf", line: "  gemfury_token = \"{t}\"", tp: &[S(AN, 20)], near: &[S(AN, 14)] },
    Row { id: "jetbrains-permanent-token", path: ".env", line: "YOUTRACK_TOKEN={t}", tp: &[L("perm:"), S(AN, 8), L("==."), S(AN, 8), L("==."), S(AN, 30)], near: &[L("perm:"), S(AN, 8), L("==."), S(AN, 8), L("==."), S(AN, 12)] },
    Row { id: "deno-deploy-token", path: "config.yaml", line: "deno_deploy_token: \"{t}\"", tp: &[L("ddp_"), S(AN, 36)], near: &[L("ddp_"), S(AN, 20)] },
    Row { id: "postman-api-key", path: "settings.json", line: "  \"postmanApiKey\": \"{t}\",", tp: &[L("PMAK-"), S(HEX, 24), L("-"), S(HEX, 34)], near: &[L("PMAK-"), S(HEX, 24), L("-"), S(HEX, 20)] },
    Row { id: "buildkite-token", path: "app.py", line: "BUILDKITE_API_TOKEN = \"{t}\"", tp: &[L("bkua_"), S(HEX, 48)], near: &[L("bkua_"), S(HEX, 20)] },
    Row { id: "buildkite-token-legacy", path: "deploy.sh", line: "export BUILDKITE_API_TOKEN='{t}'", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "circleci-token", path: "main.go", line: "\tcircleToken := \"{t}\"", tp: &[L("CCIPAT_"), S(AN, 22), L("_"), S(HEX, 40)], near: &[L("CCIPAT_"), S(AN, 22), L("_"), S(HEX, 20)] },
    Row { id: "circleci-token-legacy", path: "config.ts", line: "export const circleciToken = \"{t}\";", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "travis-ci-token", path: "main.tf", line: "  travis_api_token = \"{t}\"", tp: &[S(B64URL, 22)], near: &[S(B64URL, 16)] },
    Row { id: "coveralls-repo-token", path: ".env", line: "COVERALLS_REPO_TOKEN={t}", tp: &[S(AN, 35)], near: &[S(AN, 24)] },
    Row { id: "codecov-token", path: "config.yaml", line: "codecov_token: \"{t}\"", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "harness-token", path: "settings.json", line: "  \"harnessApiKey\": \"{t}\",", tp: &[L("pat."), S(B64URL, 22), L("."), S(HEX, 24), L("."), S(AN, 20)], near: &[L("pat."), S(B64URL, 22), L("."), S(HEX, 24), L("."), S(AN, 10)] },
    Row { id: "semaphore-token", path: "app.py", line: "SEMAPHORE_API_TOKEN = \"{t}\"", tp: &[S(AN, 24)], near: &[S(AN, 12)] },
    Row { id: "codemagic-token", path: "deploy.sh", line: "export CODEMAGIC_API_TOKEN='{t}'", tp: &[S(B64URL, 43)], near: &[S(B64URL, 20)] },
    Row { id: "sonar-token", path: "main.go", line: "\tsonarToken := \"{t}\"", tp: &[L("squ_"), S(HEX, 40)], near: &[L("squ_"), S(HEX, 30)] },
    Row { id: "sonar-token-legacy", path: "config.ts", line: "export const sonarToken = \"{t}\";", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "snyk-token", path: "main.tf", line: "  snyk_token = \"{t}\"", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "jenkins-api-token", path: ".env", line: "JENKINS_API_TOKEN={t}", tp: &[L("11"), S(HEX, 32)], near: &[L("11"), S(HEX, 20)] },
    Row { id: "drone-ci-token", path: "config.yaml", line: "drone_token: \"{t}\"", tp: &[S(AN, 32)], near: &[S(AN, 24)] },
    Row { id: "teamcity-token", path: "settings.json", line: "  \"teamcityToken\": \"{t}\",", tp: &[L("eyJ0eXAiOiAiVENWMiJ9."), S(B64URL, 36), L("."), S(B64URL, 48)], near: &[L("eyJ0eXAiOiAiVENWMiJ9."), S(B64URL, 36), L("."), S(B64URL, 8)] },
    Row { id: "octopus-deploy-api-key", path: "app.py", line: "OCTOPUS_API_KEY = \"{t}\"", tp: &[L("API-"), S(AN_U, 26)], near: &[L("API-"), S(AN_U, 16)] },
    Row { id: "prefect-api-key", path: "deploy.sh", line: "export PREFECT_API_KEY='{t}'", tp: &[L("pnu_"), S(AN, 36)], near: &[L("pnu_"), S(AN, 20)] },
    Row { id: "ngrok-authtoken", path: "main.go", line: "\tngrokAuthtoken := \"{t}\"", tp: &[L("2"), S(AN, 26), L("_"), S(AN, 21)], near: &[L("2"), S(AN, 26), L("_"), S(AN, 8)] },
    Row { id: "cypress-record-key", path: "config.ts", line: "export const cypressRecordKey = \"{t}\";", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "percy-token", path: "main.tf", line: "  percy_token = \"{t}\"", tp: &[L("web_"), S(HEX, 64)], near: &[L("web_"), S(HEX, 40)] },
    Row { id: "browserstack-access-key", path: ".env", line: "BROWSERSTACK_ACCESS_KEY={t}", tp: &[S(AN, 20)], near: &[S(AN, 14)] },
    Row { id: "saucelabs-access-key", path: "config.yaml", line: "sauce_access_key: \"{t}\"", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "stackhawk-api-key", path: "settings.json", line: "  \"hawkApiKey\": \"{t}\",", tp: &[L("hawk."), S(B64URL, 20), L("."), S(B64URL, 20)], near: &[L("hawk."), S(B64URL, 20), L("."), S(B64URL, 10)] },
    Row { id: "readme-api-key", path: "app.py", line: "README_API_KEY = \"{t}\"", tp: &[L("rdme_"), S(AN_L, 70)], near: &[L("rdme_"), S(AN_L, 40)] },
    Row { id: "configcat-sdk-key", path: "deploy.sh", line: "export CONFIGCAT_SDK_KEY='{t}'", tp: &[L("configcat-sdk-1/"), S(B64URL, 22), L("/"), S(B64URL, 22)], near: &[L("configcat-sdk-1/"), S(B64URL, 22), L("/"), S(B64URL, 10)] },
    Row { id: "launchdarkly-key", path: "main.go", line: "\tlaunchdarklySdkKey := \"{t}\"", tp: &[L("sdk-"), S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[L("sdk-"), S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "infisical-token", path: "config.ts", line: "export const infisicalToken = \"{t}\";", tp: &[L("st."), S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12), L("."), S(HEX, 32), L("."), S(HEX, 32)], near: &[L("st."), S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12), L("."), S(HEX, 32)] },
    Row { id: "codeclimate-reporter-id", path: "main.tf", line: "  cc_test_reporter_id = \"{t}\"", tp: &[S(HEX, 64)], near: &[S(HEX, 48)] },
    Row { id: "url-password-no-user", path: ".env", line: "REDIS_URL={t}", tp: &[L("redis://:"), S(AN, 24), L("@cache.internal:6379/0")], near: &[L("redis://:"), S(AN, 2), L("@cache.internal:6379/0")] },
    Row { id: "sqlalchemy-url-password", path: "config.py", line: "SQLALCHEMY_DATABASE_URI = \"{t}\"", tp: &[L("postgresql+psycopg2://app:"), S(AN, 20), L("@db.internal:5432/app")], near: &[L("postgresql+psycopg2://app:"), S(AN, 2), L("@db.internal:5432/app")] },
    Row { id: "snowflake-url-password", path: ".env", line: "SNOWFLAKE_URL=\"{t}\"", tp: &[L("snowflake://loader:"), S(AN, 20), L("@xy12345.eu-west-1/analytics")], near: &[L("snowflake://loader:"), S(AN, 2), L("@xy12345.eu-west-1/analytics")] },
    Row { id: "odbc-connection-password", path: "appsettings.json", line: "  \"Default\": \"{t}\"", tp: &[L("Driver={ODBC Driver 18 for SQL Server};Server=tcp:sql1.internal,1433;Database=app;Uid=svc;Pwd="), S(AN, 18), L(";Encrypt=yes;")], near: &[L("Driver={ODBC Driver 18 for SQL Server};Server=tcp:sql1.internal,1433;Database=app;Uid=svc;Pwd="), S(AN, 2), L(";")] },
    Row { id: "jdbc-url-password", path: "application.properties", line: "spring.datasource.url={t}", tp: &[L("jdbc:postgresql://db.internal:5432/app?user=app&password="), S(AN, 18), L("&ssl=true")], near: &[L("jdbc:postgresql://db.internal:5432/app?user=app&password="), S(AN, 2), L("&ssl=true")] },
    Row { id: "url-basic-auth-password", path: "clone.sh", line: "git clone \"{t}\"", tp: &[L("https://deploy:"), S(AN, 20), L("@git.internal.example.org/team/app.git")], near: &[L("https://deploy:"), S(AN, 2), L("@git.internal.example.org/team/app.git")] },
    Row { id: "planetscale-token", path: "config.ts", line: "export const planetscaleServiceToken = \"{t}\";", tp: &[L("pscale_pw_"), S(B64URL, 43)], near: &[L("pscale_pw_"), S(B64URL, 16)] },
    Row { id: "mongodb-atlas-private-key", path: "main.tf", line: "  mongodb_atlas_private_key = \"{t}\"", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "aiven-token", path: ".env", line: "AIVEN_TOKEN={t}", tp: &[S(B64, 372)], near: &[S(B64, 200)] },
    Row { id: "upstash-redis-token", path: "config.yaml", line: "upstash_redis_rest_token: \"{t}\"", tp: &[L("A"), S(B64URL, 70)], near: &[L("A"), S(B64URL, 20)] },
    Row { id: "influxdb-token", path: "settings.json", line: "  \"influxdbToken\": \"{t}\",", tp: &[S(B64URL, 86), L("==")], near: &[S(B64URL, 40), L("==")] },
    Row { id: "elastic-api-key", path: "app.py", line: "ELASTIC_API_KEY = \"{t}\"", tp: &[S(B64, 58), L("==")], near: &[S(B64, 20)] },
    Row { id: "fauna-secret", path: "deploy.sh", line: "export FAUNA_SECRET='{t}'", tp: &[L("fn"), S(B64URL, 38)], near: &[L("fn"), S(B64URL, 20)] },
    Row { id: "xata-api-key", path: "main.go", line: "\txataApiKey := \"{t}\"", tp: &[L("xau_"), S(AN, 36)], near: &[L("xau_"), S(AN, 16)] },
    Row { id: "convex-deploy-key", path: "config.ts", line: "export const convexDeployKey = \"{t}\";", tp: &[L("prod:happy-otter-123|"), S(B64, 80)], near: &[L("prod:happy-otter-123|"), S(B64, 16)] },
    Row { id: "confluent-api-secret", path: "main.tf", line: "  confluent_api_secret = \"{t}\"", tp: &[S(B64, 64)], near: &[S(B64, 40)] },
    Row { id: "confluent-api-key", path: ".env", line: "CONFLUENT_API_KEY={t}", tp: &[S(AN_U, 16)], near: &[S(AN_U, 10)] },
    Row { id: "datadog-api-key", path: "config.yaml", line: "dd_api_key: \"{t}\"", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "datadog-app-key", path: "settings.json", line: "  \"ddAppKey\": \"{t}\",", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "newrelic-user-api-key", path: "app.py", line: "NEW_RELIC_API_KEY = \"{t}\"", tp: &[L("NRAK-"), S(AN_U, 27)], near: &[L("NRAK-"), S(AN_U, 20)] },
    Row { id: "newrelic-insights-key", path: "deploy.sh", line: "export NEW_RELIC_INSERT_KEY='{t}'", tp: &[L("NRII-"), S(B64URL, 32)], near: &[L("NRII-"), S(B64URL, 20)] },
    Row { id: "newrelic-browser-key", path: "main.go", line: "\tnewRelicBrowserKey := \"{t}\"", tp: &[L("NRJS-"), S(HEX, 19)], near: &[L("NRJS-"), S(HEX, 12)] },
    Row { id: "newrelic-license-key", path: "config.ts", line: "export const newRelicLicenseKey = \"{t}\";", tp: &[S(HEX, 36), L("NRAL")], near: &[S(HEX, 30), L("NRAL")] },
    Row { id: "newrelic-license-key-legacy", path: "main.tf", line: "  new_relic_license_key = \"{t}\"", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "splunk-hec-token", path: ".env", line: "SPLUNK_HEC_TOKEN={t}", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "splunk-observability-token", path: "config.yaml", line: "sfx_access_token: \"{t}\"", tp: &[S(B64URL, 22)], near: &[S(B64URL, 16)] },
    Row { id: "logzio-token", path: "settings.json", line: "  \"logzioToken\": \"{t}\",", tp: &[S(ALPHA, 32)], near: &[S(ALPHA, 24)] },
    Row { id: "pagerduty-api-key", path: "app.py", line: "PAGERDUTY_TOKEN = \"{t}\"", tp: &[S("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789_+-", 20)], near: &[S(AN, 14)] },
    Row { id: "opsgenie-api-key", path: "deploy.sh", line: "export OPSGENIE_API_KEY='{t}'", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "bugsnag-api-key", path: "main.go", line: "\tbugsnagApiKey := \"{t}\"", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "honeycomb-api-key", path: "config.ts", line: "export const honeycombApiKey = \"{t}\";", tp: &[S(AN, 22)], near: &[S(AN, 16)] },
    Row { id: "honeycomb-ingest-key", path: "main.tf", line: "  honeycomb_api_key = \"{t}\"", tp: &[L("hcaik_"), S(AN_L, 58)], near: &[L("hcaik_"), S(AN_L, 30)] },
    Row { id: "dynatrace-token", path: ".env", line: "DT_API_TOKEN={t}", tp: &[L("dt0c01."), S(AN_U, 24), L("."), S(AN_U, 64)], near: &[L("dt0c01."), S(AN_U, 24), L("."), S(AN_U, 40)] },
    Row { id: "grafana-cloud-token", path: "config.yaml", line: "grafana_cloud_token: \"{t}\"", tp: &[L("glc_"), S(B64, 120)], near: &[L("glc_"), S(B64, 20)] },
    Row { id: "grafana-service-account-token", path: "settings.json", line: "  \"grafanaToken\": \"{t}\",", tp: &[L("glsa_"), S(AN, 32), L("_"), S(HEX, 8)], near: &[L("glsa_"), S(AN, 32), L("_"), S(HEX, 4)] },
    Row { id: "grafana-api-key", path: "app.py", line: "GRAFANA_API_KEY = \"{t}\"", tp: &[L("eyJrIjoi"), S(B64, 64), L("==")], near: &[L("eyJrIjoi"), S(B64, 20)] },
    Row { id: "rollbar-access-token", path: "deploy.sh", line: "export ROLLBAR_ACCESS_TOKEN='{t}'", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "sumologic-access-key", path: "main.go", line: "\tsumologicAccessKey := \"{t}\"", tp: &[S(AN, 64)], near: &[S(AN, 40)] },
    Row { id: "sumologic-access-id", path: "config.ts", line: "export const sumologicAccessId = \"{t}\";", tp: &[L("su"), S(AN, 12)], near: &[L("su"), S(AN, 8)] },
    Row { id: "loggly-token", path: "main.tf", line: "  loggly_token = \"{t}\"", tp: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "mezmo-ingestion-key", path: ".env", line: "LOGDNA_INGESTION_KEY={t}", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "airbrake-project-key", path: "config.yaml", line: "airbrake_project_key: \"{t}\"", tp: &[S(HEX, 32)], near: &[S(HEX, 24)] },
    Row { id: "betterstack-token", path: "settings.json", line: "  \"logtailSourceToken\": \"{t}\",", tp: &[S(AN, 24)], near: &[S(AN, 16)] },
    Row { id: "axiom-token", path: "app.py", line: "AXIOM_TOKEN = \"{t}\"", tp: &[L("xaat-"), S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 12)], near: &[L("xaat-"), S(HEX, 8), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 4), L("-"), S(HEX, 9)] },
    Row { id: "uptimerobot-api-key", path: "deploy.sh", line: "export UPTIMEROBOT_API_KEY='{t}'", tp: &[L("u1234567-"), S(HEX, 24)], near: &[L("u1234567-"), S(HEX, 16)] },
    Row { id: "okta-api-token", path: "main.go", line: "\toktaApiToken := \"{t}\"", tp: &[L("00"), S(B64URL, 40)], near: &[L("00"), S(B64URL, 30)] },
    Row { id: "auth0-client-secret", path: "config.ts", line: "export const auth0ClientSecret = \"{t}\";", tp: &[S(B64URL, 64)], near: &[S(B64URL, 40)] },
    Row { id: "age-secret-key", path: "main.tf", line: "  age_secret_key = \"{t}\"", tp: &[L("AGE-SECRET-KEY-1"), S("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)], near: &[L("AGE-SECRET-KEY-1"), S("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 40)] },
    Row { id: "bcrypt-hash", path: ".env", line: "PASSWORD_HASH={t}", tp: &[L("$2b$12$"), S("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 53)], near: &[L("$2b$12$"), S("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 40)] },
    Row { id: "sha-crypt-hash", path: "config.yaml", line: "password_hash: \"{t}\"", tp: &[L("$6$"), S(AN, 16), L("$"), S("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 86)], near: &[L("$6$"), S(AN, 16), L("$"), S("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 60)] },
    Row { id: "md5-crypt-hash", path: "settings.json", line: "  \"passwordHash\": \"{t}\",", tp: &[L("$apr1$"), S(AN, 8), L("$"), S("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 22)], near: &[L("$apr1$"), S(AN, 8), L("$"), S("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 12)] },
    Row { id: "argon2-hash", path: "app.py", line: "PASSWORD_HASH = \"{t}\"", tp: &[L("$argon2id$v=19$m=65536,t=3,p=4$"), S(B64, 22), L("$"), S(B64, 43)], near: &[L("$argon2id$v=19$m=65536,t=3,p=4$"), S(B64, 22), L("$"), S(B64, 8)] },
    Row { id: "htpasswd-sha1-hash", path: "deploy.sh", line: "export PASSWORD_HASH='{t}'", tp: &[L("{SHA}"), S(B64, 27), L("=")], near: &[L("{SHA}"), S(B64, 16), L("=")] },
    Row { id: "putty-private-key", path: "deploy.ppk", line: "{t}", tp: &[L("PuTTY-User-Key-File-3: ssh-ed25519")], near: &[L("PuTTY-User-Key-File-1: ssh-ed25519")] },
    Row { id: "onepassword-service-account-token", path: "config.ts", line: "export const opServiceAccountToken = \"{t}\";", tp: &[L("ops_eyJ"), S(B64, 400)], near: &[L("ops_eyJ"), S(B64, 40)] },
    Row { id: "onepassword-secret-key", path: "main.tf", line: "  op_secret_key = \"{t}\"", tp: &[L("A3-"), S(AN_U, 6), L("-"), S(AN_U, 6), L("-"), S(AN_U, 5), L("-"), S(AN_U, 5), L("-"), S(AN_U, 5), L("-"), S(AN_U, 5), L("-"), S(AN_U, 5)], near: &[L("A3-"), S(AN_U, 6), L("-"), S(AN_U, 6), L("-"), S(AN_U, 5)] },
    Row { id: "duo-secret-key", path: ".env", line: "DUO_SECRET_KEY={t}", tp: &[S(AN, 40)], near: &[S(AN, 30)] },
    Row { id: "jumpcloud-api-key", path: "config.yaml", line: "jumpcloud_api_key: \"{t}\"", tp: &[S(HEX, 40)], near: &[S(HEX, 32)] },
    Row { id: "keycloak-client-secret", path: "settings.json", line: "  \"keycloakClientSecret\": \"{t}\",", tp: &[S(AN, 32)], near: &[S(AN, 24)] },
    Row { id: "onelogin-client-secret", path: "app.py", line: "ONELOGIN_CLIENT_SECRET = \"{t}\"", tp: &[S(HEX, 64)], near: &[S(HEX, 48)] },
    Row { id: "stytch-secret", path: "deploy.sh", line: "export STYTCH_SECRET='{t}'", tp: &[L("secret-live-"), S(B64URL, 36)], near: &[L("secret-live-"), S(B64URL, 20)] },
    Row { id: "snowflake-password", path: "main.go", line: "\tsnowflakePassword := \"{t}\"", tp: &[S(AN, 20)], near: &[S(AN, 5)] },
];

/// The stdlib's detectors, built and compiled once for all the tests here.
fn detectors() -> &'static Detectors {
    static DETECTORS: OnceLock<Detectors> = OnceLock::new();
    DETECTORS.get_or_init(build_detectors)
}

fn build_detectors() -> Detectors {
    let sources: Vec<PolicySource> = contextos_stdlib::FILES
        .iter()
        .map(|(name, text)| PolicySource {
            name: name.to_string(),
            text: text.to_string().into(),
            layer: Layer::Stdlib,
        })
        .collect();
    let out = build(&sources, &BuildOptions::default());
    let Some(policy) = out.policy else {
        panic!("stdlib does not compile: {:#?}", out.diagnostics);
    };
    let d = Detectors::new(policy.detectors.get().unwrap()).expect("detectors prepare");
    d.warm().expect("every detector regex compiles");
    d
}

fn infra_ids() -> BTreeSet<String> {
    let (_, text) = contextos_stdlib::FILES
        .iter()
        .find(|(name, _)| *name == POLICY)
        .expect("secrets-infra.policy is in the stdlib");
    text.split("@id(\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or_default().to_string())
        .collect()
}

fn token(seed: u64, parts: &[Part]) -> String {
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            L(s) => (*s).to_string(),
            S(alphabet, n) => rnd(seed * 31 + i as u64, *n, alphabet),
        })
        .collect()
}

fn place(row: &Row, tok: &str) -> String {
    format!("{}\n", row.line.replace("{t}", tok))
}

fn fired(d: &Detectors, row: &Row, text: &str) -> bool {
    rules(d, row.path, text)
        .iter()
        .any(|(r, l)| r == row.id && *l == Some(1))
}

#[test]
fn every_provider_fake_is_found_by_its_detector() {
    let d = detectors();
    let misses: Vec<String> = ROWS
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let text = place(row, &token(i as u64 + 1, row.tp));
            (!fired(d, row, &text)).then(|| {
                format!(
                    "{} missed: {text:?} got {:?}",
                    row.id,
                    rules(d, row.path, &text)
                )
            })
        })
        .collect();
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn no_near_miss_is_reported_by_its_detector() {
    let d = detectors();
    let hits: Vec<String> = ROWS
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let text = place(row, &token(i as u64 + 1, row.near));
            fired(d, row, &text).then(|| format!("{} fired on near miss {text:?}", row.id))
        })
        .collect();
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}

#[test]
fn every_infra_detector_has_exactly_one_row() {
    let ids = infra_ids();
    let mut seen = BTreeSet::new();
    for row in ROWS {
        assert!(ids.contains(row.id), "row for unknown detector {}", row.id);
        assert!(seen.insert(row.id), "two rows for {}", row.id);
    }
    let untested: Vec<&String> = ids
        .iter()
        .filter(|id| !seen.contains(id.as_str()))
        .collect();
    assert!(untested.is_empty(), "detectors without a row: {untested:?}");
    assert!(
        ids.len() >= 130,
        "only {} infrastructure detectors",
        ids.len()
    );
}

/// Lines that look like credentials to a careless pattern but are not: none of the
/// infrastructure detectors may report them.
#[test]
fn decoys_are_not_reported() {
    let d = detectors();
    let ids = infra_ids();
    let decoys: Vec<(&str, String)> = vec![
        (
            "a.py",
            format!(
                "request_id = \"{}-{}-{}-{}-{}\"\n",
                rnd(1, 8, HEX),
                rnd(2, 4, HEX),
                rnd(3, 4, HEX),
                rnd(4, 4, HEX),
                rnd(5, 12, HEX)
            ),
        ),
        ("h.txt", format!("sha256: {}\n", rnd(6, 64, HEX))),
        ("c.txt", format!("commit {}\n", rnd(7, 40, HEX))),
        (
            "l.json",
            format!("\"integrity\": \"sha512-{}==\"\n", rnd(8, 86, B64)),
        ),
        (
            "s.sh",
            "sed -E 's/([a-z]+)-([0-9]+)/$1$2/g' in.txt\n".into(),
        ),
        (
            "r.md",
            "Connect with `https://user:password@example.com/repo.git`.\n".into(),
        ),
        (
            "c.yml",
            "url: redis://:${REDIS_PASSWORD}@redis:6379/0\n".into(),
        ),
        (
            "c.yml",
            "url: \"jdbc:postgresql://db/app?user=app&password=${DB_PASSWORD}\"\n".into(),
        ),
        (
            "c.json",
            "\"ConnectionStrings\": \"Server=db;Database=app;User Id=sa;Password={0};\"\n".into(),
        ),
        ("d.env", "DD_API_KEY=${DATADOG_API_KEY}\n".into()),
        (
            "m.py",
            "datadog_api_key = os.environ[\"DD_API_KEY\"]\n".into(),
        ),
        ("t.tf", "heroku_api_key = var.heroku_api_key\n".into()),
        ("u.go", "user.serializeToStringBuffer(buf)\n".into()),
        (
            "p.yaml",
            "image: registry.example.org/team/app:1.2.3\n".into(),
        ),
        (
            "g.kt",
            "implementation(\"com.squareup.okhttp3:okhttp:4.12.0\")\n".into(),
        ),
        ("n.txt", "host: db.internal:5432\n".into()),
        (
            "k.md",
            format!(
                "kubeadm join 10.0.0.1:6443 --token {}\n",
                "abcdef.0123456789abcdef"
            ),
        ),
        ("x.env", format!("SNYK_TOKEN={}\n", "x".repeat(36))),
        (
            "w.conf",
            "PrivateKey = <paste the private key here>\n".into(),
        ),
        ("b.txt", "Price: $2.50 per $10 unit\n".into()),
    ];
    let mut hits = Vec::new();
    for (path, text) in &decoys {
        for (rule, _) in rules(d, path, text) {
            if ids.contains(&rule) {
                hits.push(format!("{rule} on {text:?}"));
            }
        }
    }
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}

fn alphabet(part: &toml::Value) -> String {
    if let Some(chars) = part.get("chars").and_then(|c| c.as_str()) {
        return chars.to_string();
    }
    let set = part
        .get("set")
        .and_then(|s| s.as_str())
        .expect("set or chars");
    match set {
        "alnum" | "base62" => AN,
        "alnum_lower" => AN_L,
        "alnum_upper" => AN_U,
        "alpha" => ALPHA,
        "hex" => HEX,
        "hex_upper" => HEX_U,
        "digits" => DIG,
        "base64" => B64,
        "base64url" => B64URL,
        other => panic!("unknown set {other}"),
    }
    .to_string()
}

/// A token from a formats-file entry: literal parts as written, generated parts at both
/// ends of their length range (`long` picks the maximum).
fn toml_token(seed: u64, entry: &toml::Value, long: bool) -> String {
    let parts = entry
        .get("parts")
        .and_then(|p| p.as_array())
        .expect("parts");
    let token: String = parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            if let Some(lit) = part.get("lit").and_then(|l| l.as_str()) {
                return lit.to_string();
            }
            let min = part.get("min").and_then(|m| m.as_integer()).expect("min");
            let max = part.get("max").and_then(|m| m.as_integer()).expect("max");
            assert!(0 < min && min <= max, "bad length range in {entry}");
            let n = if long { max } else { min } as usize;
            rnd(seed * 17 + i as u64, n, &alphabet(part))
        })
        .collect();
    match entry.get("checksum").and_then(|c| c.as_str()) {
        None => token,
        Some("grafana-crc32") => {
            let sum = contextos_scan::checksum::grafana_sum(token.as_bytes());
            format!("{token}_{}", String::from_utf8(sum).expect("hex"))
        }
        Some(other) => panic!("no generator for checksum {other} in {entry}"),
    }
}

#[test]
fn the_formats_file_matches_the_detectors() {
    let text = std::fs::read_to_string(FORMATS).expect("infra.toml");
    let doc: toml::Value = toml::from_str(&text).expect("infra.toml parses");
    let ids = infra_ids();
    let d = detectors();
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
    let formats = doc
        .get("format")
        .and_then(|f| f.as_array())
        .expect("[[format]]");
    let near = doc
        .get("near_miss")
        .and_then(|f| f.as_array())
        .expect("[[near_miss]]");
    let mut problems = Vec::new();
    let mut covered = BTreeSet::new();
    for (i, f) in formats.iter().enumerate() {
        let id = f
            .get("detector")
            .and_then(|v| v.as_str())
            .expect("detector");
        let family = f.get("family").and_then(|v| v.as_str()).expect("family");
        let category = f
            .get("category")
            .and_then(|v| v.as_str())
            .expect("category");
        assert!(
            family == family.to_lowercase(),
            "family {family} is not lower-case"
        );
        assert!(
            categories.contains(&category),
            "unknown category {category}"
        );
        assert!(f
            .get("doc")
            .and_then(|v| v.as_str())
            .is_some_and(|u| u.starts_with("https://")));
        assert!(f.get("variable").and_then(|v| v.as_str()).is_some());
        let row = ROWS
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("format for unknown detector {id}"));
        covered.insert(id.to_string());
        for long in [false, true] {
            let text = place(row, &toml_token(i as u64 + 101, f, long));
            if !fired(d, row, &text) {
                problems.push(format!("format of {id} not found: {text:?}"));
            }
        }
    }
    for (i, f) in near.iter().enumerate() {
        let id = f
            .get("detector")
            .and_then(|v| v.as_str())
            .expect("detector");
        let row = ROWS
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("near miss for unknown detector {id}"));
        let text = place(row, &toml_token(i as u64 + 501, f, true));
        if fired(d, row, &text) {
            problems.push(format!("near miss of {id} reported: {text:?}"));
        }
    }
    let missing: Vec<&String> = ids.iter().filter(|id| !covered.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "detectors without a format entry: {missing:?}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
