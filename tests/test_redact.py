"""memcli.secrets.redact: secret-shaped values become [REDACTED:<kind>], ordinary identifiers stay.

The secrets here are fake but format-valid. The corpus tests score tests/data/secrets with
the scorer of bench/bench_secrets.py (loaded from its path: bench/ is not a package).
"""

from __future__ import annotations

import base64
import importlib.util
import json
import time
from pathlib import Path

import pytest
import yaml

from memcli.errors import CONFIG, ConfigError
from memcli.secrets import redact as redact_module
from memcli.secrets import rules as secret_rules
from memcli.secrets.redact import KINDS, Finding, Redactor, redact

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "secrets"

OPENAI = "sk-proj-Xk3vN9qLw2Rt7YbZpA1sDf4GhJ6kLmN8oPqRsTuVwXyZ0aBcDeFgHiJkLmNoPqRsT3BlbkFJ"
ANTHROPIC = (
    "sk-ant-api03-" + "Zq9xW2eR4tY6uI8oP0aS1dF3gH5jK7lL9zX1cV3bN5mQ7wE9rT1yU3iO5pA7sD9fG1hJ3kL5zX7cV9bN1mQ3wE5rT7AA"
)
AWS_ID = "AKIA2E7NQ4ZPXJ6LRTKU"
AWS_SECRET = "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"
GITHUB = "ghp_R7tY2uI9oP4aS6dF1gH3jK5lZ8xC0vB2nM4q"
GITHUB_PAT = (
    "github_pat_11ABCDE2F0g7H8i9J0k1L2_" + "m3N4o5P6q7R8s9T0u1V2w3X4y5Z6a7B8c9D0e1F2g3H4i5J6k7L8m9N0o1P2q3R4s5T6u7"
)
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIzaSyB3x9Kq2Lm7Np4Rs6Tu8Vw0Xy1Za3Bc5De"
STRIPE = "sk_live_51Hx2Kq9Lm3Np4Rs5Tu6Vw7Xy8Za9Bc0De1Fg2Hi3Jk4"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSIsImlhdCI6MTUxNjIzOTAyMn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7dGx2lW3Y9kQv8Zr1Tn5Lp0Hs6Jm4Ca2Ge8Ru\n"
    "Nf3Lr9Tz4Wv7Yb1Kd6Hs3Jm0Px5Ca8Ge2Ru4VwXyZ0aBcDeFgHiJkL\n-----END RSA PRIVATE KEY-----"
)

# one real-format example per kind, in a realistic line
KIND_SAMPLES = [
    ("openai_key", f"here is the key: {OPENAI} (rotate it)", OPENAI),
    ("openai_key", "DASHSCOPE_API_KEY=sk-3f9a1c0e7b2d4f6a8c0e1b3d5f7a9c2e", "sk-3f9a1c0e7b2d4f6a8c0e1b3d5f7a9c2e"),
    ("anthropic_key", f"ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    ("aws_access_key_id", f"the CI key id is {AWS_ID}.", AWS_ID),
    ("aws_secret_key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("github_token", f"git clone https://{GITHUB}@github.com/acme/x.git", GITHUB),
    ("github_token", f"GH_TOKEN: {GITHUB_PAT}", GITHUB_PAT),
    ("slack_token", f"bot token {SLACK}", SLACK),
    (
        "slack_webhook",
        "https://hooks.slack.com/services/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",
        "Q1w2E3r4T5y6U7i8O9p0A1s2",
    ),
    ("google_api_key", f"<script src='https://maps.googleapis.com/maps/api/js?key={GOOGLE}'>", GOOGLE),
    ("google_oauth", '"client_secret": "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"', "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"),
    ("stripe_key", f"stripe.api_key = '{STRIPE}'", STRIPE),
    ("jwt", f"Authorization: Bearer {JWT}", JWT),
    ("private_key", f"deploy key:\n{PEM}\nthanks", PEM),
    ("gitlab_token", "GITLAB_TOKEN=glpat-Ab3De5Gh7Jk9Mn1Pq3St", "glpat-Ab3De5Gh7Jk9Mn1Pq3St"),
    (
        "npm_token",
        "//registry.npmjs.org/:_authToken=npm_Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hi5",
        "npm_Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hi5",
    ),
    ("huggingface_token", "HF_TOKEN=hf_Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3H", "hf_Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3H"),
    (
        "sendgrid_key",
        "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",
        "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",
    ),
    (
        "bearer_token",
        "curl -H 'Authorization: Bearer 7f3K9qLm2Np4Rs6Tu8Vw0Xy1Za3Bc5De' https://api.x",
        "7f3K9qLm2Np4Rs6Tu8Vw0Xy1Za3Bc5De",
    ),
    ("basic_auth", "Authorization: Basic YWRtaW46aHVudGVyMg==", "YWRtaW46aHVudGVyMg=="),
    ("url_password", "DATABASE_URL=postgres://app:Zq8xL2pW@db.internal:5432/app", "Zq8xL2pW"),
    ("password", "my password is hunter2!", "hunter2"),
]


@pytest.mark.parametrize("kind,text,secret", KIND_SAMPLES, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(KIND_SAMPLES)])
def test_each_kind_is_found(kind, text, secret):
    out, kinds = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert kind in kinds and kind in KINDS


def test_kinds_are_snake_case_and_cover_the_issue():
    assert all(k.replace("_", "").isalnum() and k == k.lower() for k in KINDS)
    for kind in (
        "openai_key",
        "anthropic_key",
        "aws_access_key_id",
        "aws_secret_key",
        "github_token",
        "slack_token",
        "google_api_key",
        "stripe_key",
        "jwt",
        "private_key",
        "password",
        "url_password",
    ):
        assert kind in KINDS


KEPT = [
    "Fixed in commit 3f9a1c0e7b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a (see #482).",
    "HEAD is now at 3f9a1c0 fix flaky test",
    "request_id=123e4567-e89b-42d3-a456-426614174000",
    "image: ghcr.io/acme/api@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "connect ECONNREFUSED 127.0.0.1:5432",
    "MongoServerError: E11000 duplicate key error",
    "HTTP 404 Not Found",
    "ORA-00942: table or view does not exist",
    "Upgraded to v1.2.3; pydantic 2.8.3-beta.1",
    "tiktoken==0.7.0",
    "Secrets live in /run/secrets/db_password",
    "https://github.com/acme/mem/pull/482",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "Switched the tokenizer; pip install scikit-learn; ported the sk-learn code; task-1234",
    "AWS access key ids start with AKIA.",
    "OPENAI_API_KEY=sk-...",
    "export OPENAI_API_KEY=YOUR_API_KEY",
    "Authorization: Bearer <token>",
    "api_key: xxxxxxxxxxxxxxxx",
    "password: ${DB_PASSWORD}",
    "password=changeme",
    "Never use password123.",
    "See [[2024-05-14 standup]] and [[Secrets handling]]",
    "2024-05-14T09:12:44+02:00",
    "10.0.12.7 - - GET /health 200",
    "the password is stored in vault",
    "password reset flow",
    "We hit the token limit of 400.",
    "The secret sauce is caching.",
    "Password: incorrect",
    "max_tokens: 4096",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ana@laptop",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
    "STRIPE_PUBLISHABLE_KEY=pk_live_51Hx2Kq9Lm3Np4Rs5Tu6Vw7Xy",
    '{"token": "Hello", "logprob": -0.31}',
    "api_key = os.environ['OPENAI_API_KEY']",
    "token = get_token()",
    "密码已重置，请查收邮件。",
]


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_text_is_kept(text):
    assert redact(text) == (text, [])


# the context families of memcli.secrets.rules: one realistic line each, and the near misses
FAMILIES = [
    ("command line", "docker login -u ci -p Zq8xL2pW9k registry.acme.dev", "Zq8xL2pW9k"),
    ("command line", "mysqldump -uroot -p'S3cr3t!x' --all-databases > all.sql", "S3cr3t!x"),
    ("command line", "- ran `redis-cli -a Zq8xL2pW9k FLUSHALL` on staging", "Zq8xL2pW9k"),
    ("command line", "sshpass -p 'Zq8xL2pW9k' ssh root@10.0.0.5", "Zq8xL2pW9k"),
    ("command line", "PGPASSWORD=Zq8xL2pW9k psql -h db.internal -U app app", "Zq8xL2pW9k"),
    ("command line", "curl --user=admin:Zq8xL2pW9k https://ci.acme.dev/api/json", "Zq8xL2pW9k"),
    ("command line", "htpasswd -bc /etc/nginx/.htpasswd admin Zq8xL2pW9k", "Zq8xL2pW9k"),
    ("command line", "docker login \\\n  -u deploy \\\n  -p Zq8xL2pW9k \\\n  registry.acme.dev", "Zq8xL2pW9k"),
    ("command line", "sqlcmd -S db -U sa -P 'Zq8xL2pW9k' -Q 'SELECT 1'", "Zq8xL2pW9k"),
    ("config file", "machine api.heroku.com\n  login ana@example.com\n  password Zq8xL2pW9k", "Zq8xL2pW9k"),
    ("config file", "//registry.npmjs.org/:_auth=YWRtaW46aHVudGVyMg==\nalways-auth=true", "YWRtaW46aHVudGVyMg=="),
    ("config file", '{"auths": {"ghcr.io": {"auth": "YWRtaW46aHVudGVyMg=="}}}', "YWRtaW46aHVudGVyMg=="),
    ("config file", "[pypi]\nusername = deploy\npassword = Zq8x!L2pW9k", "Zq8x!L2pW9k"),
    (
        "config file",
        "users:\n- name: admin\n  user:\n    token: b8db38015df10e33bc24d6d6c6d69bcd",
        "b8db38015df10e33bc24d6d6c6d69bcd",
    ),
    ("config file", 'variable "db_password" {\n  type    = string\n  default = "Zq8xL2pW9k"\n}', "Zq8xL2pW9k"),
    ("config file", "FROM postgres:16\nENV POSTGRES_PASSWORD Zq8xL2pW9k", "Zq8xL2pW9k"),
    (
        "connection string",
        "Data Source=db;User Id=sa;Password=correct horse battery staple;",
        "correct horse battery staple",
    ),
    ("connection string", "Driver={ODBC Driver 18};Server=db;UID=app;PWD={Zq8x;L2pW9k};", "Zq8x;L2pW9k"),
    ("table", "| user | password |\n|---|---|\n| admin | gZ8Z4ZBSg@EN&bU_ |", "gZ8Z4ZBSg@EN&bU_"),
    ("table", "| Key | Value |\n|:--|:--|\n| DB_HOST | db.internal |\n| DB_PASSWORD | Zq8x-L2pW9k |", "Zq8x-L2pW9k"),
    (
        "prose",
        "The VPN password changed, it is now 68c50b96a54dd600c2ef8c5f2cee80cb",
        "68c50b96a54dd600c2ef8c5f2cee80cb",
    ),
    ("prose", "heads up: the staging token was rotated, the new one is Zq8xL2pW9kZq8x", "Zq8xL2pW9kZq8x"),
    ("prose", "use token b8db38015df10e33bc24d6d6c6d69bcd for the staging API", "b8db38015df10e33bc24d6d6c6d69bcd"),
    ("prose", "the root password `swordfish` works on all three boxes", "swordfish"),
    ("prose", "the wifi password is swordfish", "swordfish"),
    ("prose", "Credentials for staging: admin / m5Zc1w9cSxJnYwpzp", "m5Zc1w9cSxJnYwpzp"),
    ("prose", "Credentials for the NAS: admin / rrQeFkxPabXLTWx", "rrQeFkxPabXLTWx"),
    ("code", 'requests.get(url, auth=("admin", "ByuxrKWg29HXWmYE"))', "ByuxrKWg29HXWmYE"),
    ("code", 'server.login("alerts@acme.dev", "Zq8xL2pW9k")', "Zq8xL2pW9k"),
]
FAMILY_NEAR_MISSES = [
    "docker login -p is deprecated; use --password-stdin instead.",
    "Run `docker login -p` only in CI.",
    "docker run -d -p 8080:80 -p 443:443 nginx:1.27",
    "docker login ghcr.io && docker run -p 5432:5432 postgres:16",
    "ssh -p 2222 deploy@bastion.acme.dev",
    "mysql -h db.internal -P 3306 -u root -p app_production",
    "mysql -u root -p",
    "redis-cli -a <password> ping",
    'redis-cli -h cache -a "$REDIS_PASSWORD" --no-auth-warning info',
    "htpasswd -c /etc/nginx/.htpasswd admin",
    "docker run --rm -u 1000:1000 node:20 npm ci",
    "docker exec -u www-data:www-data app php artisan migrate",
    "mysql -uroot -p{password} app",
    "The machine learning login flow sends a password reset email.",
    "//npm.pkg.github.com/:_authToken=${NPM_TOKEN}",
    '{"auth": {"type": "oauth2", "flow": "pkce"}}',
    'variable "password_length" {\n  default = "24"\n}',
    'variable "db_password" {\n  type      = string\n  sensitive = true\n}',
    "Server=db;Database=app;User Id=sa;Password=${SA_PASSWORD};",
    'conn = f"Server=db;Uid=sa;Pwd={pwd};"',
    "| Field | Type | Description |\n|---|---|---|\n| password | string | The user's password |",
    "| name | token |\n|---|---|\n| prod | rotated |",
    "| model | tokens |\n|---|---|\n| gpt-4o | 128000 |",
    "The password policy changed, it is now 14 characters minimum.",
    "The token limit is now 8192.",
    "Use token-based auth for the API.",
    "the password is incorrect.",
    "the password is expired",
    "credentials: vault/kv/app/db",
    "Rotate the password `db-prod` in Vault.",
    "Pass `--json` to get the output.",
    'requests.get(url, auth=("user", "<password>"))',
    "auth=(user, password)",
]


@pytest.mark.parametrize("family,text,secret", FAMILIES, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(FAMILIES)])
def test_context_families_are_found(family, text, secret):
    out, kinds = redact(text)
    assert secret not in out and "[REDACTED:" in out, out
    assert kinds and set(kinds) <= {"password", "basic_auth"}


@pytest.mark.parametrize("text", FAMILY_NEAR_MISSES)
def test_context_near_misses_are_kept(text):
    assert redact(text) == (text, [])


def test_context_families_replace_only_the_value():
    assert (
        redact("machine a.acme.dev login ana password Zq8xL2pW9k")[0]
        == "machine a.acme.dev login ana password [REDACTED:password]"
    )
    assert (
        redact("Server=db;User Id=sa;Password=correct horse battery;Encrypt=true")[0]
        == "Server=db;User Id=sa;Password=[REDACTED:password];Encrypt=true"
    )
    assert (
        redact("docker login -u ci -p Zq8xL2pW9k reg && docker run -p 8080:80 app")[0]
        == "docker login -u ci -p [REDACTED:password] reg && docker run -p 8080:80 app"
    )
    assert (
        redact("| env | password |\n|---|---|\n| prod | Zq8xL2pW9k |\n| dev | see vault |")[0]
        == "| env | password |\n|---|---|\n| prod | [REDACTED:password] |\n| dev | see vault |"
    )


def test_a_long_value_goes_whole():
    data = base64.b64encode((PEM * 4).encode()).decode()  # kubeconfig client-key-data: a base64 private key
    assert len(data) > 256  # longer than an unquoted value's first run
    assert (
        redact(f"users:\n- name: a\n  user:\n    client-key-data: {data}\n")[0]
        == "users:\n- name: a\n  user:\n    client-key-data: [REDACTED:password]\n"
    )


def test_idempotent_on_the_whole_corpus():
    r = Redactor.from_config()
    for line in (CORPUS / "positives.jsonl").read_text(encoding="utf-8").splitlines():
        once, _ = r.redact(json.loads(line)["text"])
        assert r.redact(once) == (once, [])


def test_markers_are_never_matched_again():
    text = "password=[REDACTED:password] token: [REDACTED:github_token] postgres://u:[REDACTED:url_password]@h/db"
    assert redact(text) == (text, [])


def test_json_stays_json():
    doc = {"db": {"host": "10.0.0.5", "user": "app", "db_password": "Tr0ub4dor&3"}, "key": OPENAI, "retries": 3}
    out, kinds = redact(json.dumps(doc))
    data = json.loads(out)
    assert data["db"] == {"host": "10.0.0.5", "user": "app", "db_password": "[REDACTED:password]"}
    assert data["key"] == "[REDACTED:openai_key]" and data["retries"] == 3
    assert sorted(kinds) == ["openai_key", "password"]


def test_yaml_and_env_keep_key_and_separator():
    yml = "database:\n  user: app\n  password: hunter2 # rotated monthly\n  token: 'abc123'\n  pool: 5\n"
    out, _ = redact(yml)
    assert out == (
        "database:\n  user: app\n  password: [REDACTED:password] # rotated monthly\n"
        "  token: '[REDACTED:password]'\n  pool: 5\n"
    )
    # still YAML with the same keys; an unquoted marker reads as a flow list there, so
    # parsed data (front matter) should go through redact_value instead of the text
    assert yaml.safe_load(out)["database"] == {
        "user": "app",
        "password": ["REDACTED:password"],
        "token": "[REDACTED:password]",
        "pool": 5,
    }
    env = f'export AWS_SECRET_ACCESS_KEY={AWS_SECRET}\nPASSWORD: "s3cr3t-Value"\nDB_PASSWORD=postgres\n'
    assert redact(env)[0] == (
        "export AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]\n"
        'PASSWORD: "[REDACTED:password]"\nDB_PASSWORD=[REDACTED:password]\n'
    )


def test_prose_needs_a_credential_shaped_value():
    assert redact("my password is hunter2!")[0] == "my password is [REDACTED:password]"  # a "!" may be the password's
    assert redact("数据库密码是 Zx9!mK2#pQ，不要外传。")[0] == "数据库密码是 [REDACTED:password]，不要外传。"
    for kept in (
        "the password is stored in vault",
        "Token: expired",
        "the token is cached for 3600 seconds",
        "the default password is printed on the router label",
    ):
        assert redact(kept) == (kept, [])


def test_url_loses_only_the_password():
    assert redact("postgres://user:pass@host/db")[0] == "postgres://user:[REDACTED:url_password]@host/db"
    assert redact("redis://:Xy7Qw2Lk9@cache:6379/0")[0] == "redis://:[REDACTED:url_password]@cache:6379/0"
    for kept in (
        "https://ana@dev.azure.com/acme/_git/mem",
        "redis://:${REDIS_PASSWORD}@cache:6379",
        "mysql://root:<password>@db/app",
        "http://localhost:8080/api?limit=50",
    ):
        assert redact(kept) == (kept, [])


def test_query_string_value_ends_at_ampersand():
    out, _ = redact("jdbc:mysql://db:3306/app?user=app&password=Zq8xL2pW&useSSL=true")
    assert out == "jdbc:mysql://db:3306/app?user=app&password=[REDACTED:password]&useSSL=true"


def test_pem_blocks_go_whole_and_public_ones_stay():
    out, kinds = redact(f"before\n{PEM}\nafter")
    assert out == "before\n[REDACTED:private_key]\nafter" and kinds == ["private_key"]
    cut = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\nAAAAAAAB\n\nnext paragraph"
    assert redact(cut)[0] == "[REDACTED:private_key]\n\nnext paragraph"
    escaped = json.dumps({"type": "service_account", "private_key": PEM + "\n"})
    assert json.loads(redact(escaped)[0])["private_key"] == "[REDACTED:private_key]\n"


def test_find_reports_spans_without_changing_anything():
    text = f"key {GITHUB} and password=hunter22"
    found = Redactor.from_config().find(text)
    assert [(f.kind, text[f.start : f.end]) for f in found] == [("github_token", GITHUB), ("password", "hunter22")]
    assert all(isinstance(f, Finding) for f in found)


def test_redact_value_walks_json_like_data():
    data = {
        "password": "correct horse battery",
        "token": "Hello",
        "api_key": "abc",
        "count": 3,
        "secret": True,
        "pwd": "***",
        "auth": "dXNlcjpwYXNzd29yZA==",
        "nested": [{"client_secret": "s3cr3tValue"}, (OPENAI,)],
        "note": "my password is hunter2!",
    }
    found: list[str] = []
    out = Redactor.from_config().redact_value(data, found)
    assert out == {
        "password": "[REDACTED:password]",
        "token": "Hello",
        "api_key": "abc",
        "count": 3,
        "secret": True,
        "pwd": "***",
        "auth": "[REDACTED:password]",
        "nested": [{"client_secret": "[REDACTED:password]"}, ("[REDACTED:openai_key]",)],
        "note": "my password is [REDACTED:password]",
    }
    assert data["password"] == "correct horse battery"  # a copy, the input is untouched
    assert sorted(found) == ["openai_key"] + ["password"] * 4


def test_custom_patterns_and_named_group():
    r = Redactor.from_config(extra_patterns={"ticket_token": r"TKT-[0-9]{6}", "pin": r"PIN (?P<secret>\d{4})"})
    out, kinds = r.redact("use TKT-123456, PIN 4711")
    assert out == "use [REDACTED:ticket_token], PIN [REDACTED:pin]" and kinds == ["ticket_token", "pin"]


@pytest.mark.parametrize("patterns,word", [({"broken": "sk-(["}, "broken"), ({"Bad Name": "x"}, "Bad Name")])
def test_bad_custom_pattern_is_a_config_error(patterns, word):
    with pytest.raises(ConfigError) as err:
        Redactor.from_config(extra_patterns=patterns)
    assert word in err.value.line() and "\n" not in err.value.line()
    assert err.value.exit_code == CONFIG


def test_disabled_kinds_and_switch():
    text = f"Authorization: Bearer {JWT}"
    assert Redactor.from_config(disabled_kinds=["jwt", "bearer_token"]).redact(text) == (text, [])
    assert Redactor.from_config(enabled=False).redact("password=hunter22") == ("password=hunter22", [])
    assert Redactor.from_config(enabled=False).find(OPENAI) == []
    with pytest.raises(ConfigError, match="no_such_kind"):
        Redactor.from_config(disabled_kinds=["no_such_kind"])


PATHOLOGICAL = {
    "letters": "a" * (1 << 20),
    "base64 run": "Ab1/" * (1 << 18),
    "repeated jwt prefix": "eyJ" * 350_000,
    "aws words": "aws" * 350_000,
    "keys without values": "password=" * 110_000,
    "prose keys": "pass " * 200_000,
    "version dots": "password: " + "1." * 120 + "!\n" * 10_000,
    "begin lines": "-----BEGIN RSA PRIVATE KEY-----\n" * 30_000,
    "url colons": "://a:" * 200_000,
    "yaml tokens": "token: x\n" * 110_000,
    "bearer words": "Bearer " * 150_000,
    "xml tags": "<password>" * 100_000,
    "cjk keys": "密码：" * 300_000,
    "flags": "--x " * 250_000,
    "one long line of pairs": "password: abcd1234 " * 50_000,
    "one long line of prose": "secret is abc123 " * 60_000,
    # the context families: flags, tools, continuations, .netrc, auth, HCL, connection strings, tables, prose
    "login flags": "docker login -p " * 70_000,
    "attached flags": "mysql -pXy9 " * 90_000,
    "dash flags": "x -w " * 200_000,
    "tool names": "mysql " * 170_000,
    "continuations": "docker \\\n" * 110_000,
    "htpasswd": "htpasswd -b a b " * 60_000,
    "netrc": "machine a.b login " * 60_000,
    "npm auth": "_auth=" * 170_000,
    "auth base64": "auth: " + "QWxh" * 260_000,
    "hcl blocks": 'variable "db_password" {\n default = "x"\n' * 25_000,
    "defaults": 'default = "abcd" ' * 60_000,
    "connection strings": "Server=a;Password=" * 55_000,
    "a long connection value": ";pwd=" + "a b " * 250_000,
    "table headers": "| password |\n|---|\n" * 50_000,
    "table rows": "| password | x |\n|---|---|\n" + "| a | b |\n" * 100_000,
    "table pipes": "|---" * 250_000,
    "one huge row": "| key |\n|---|\n|" + "a" * (1 << 20),
    "changed": "password changed " * 60_000,
    "use token": "use token " * 100_000,
    "bare keys": "password " * 110_000,
    "quoted bare keys": "password `" * 100_000,
    "label colons": "credentials: " * 80_000,
    "colons": "a:" * 500_000,
    "auth pairs": 'auth=("a", ' * 90_000,
    "parens": "(" * 1_000_000,
    "long value": "client-key-data: " + "A" * (1 << 20),
    "long values": ("token: " + "A" * 300 + " ") * 3000,
    "run-on keys": "password=" * 110_000,
    "env lines": "ENV PASSWORD " * 80_000,
}


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_no_catastrophic_backtracking(name):
    """Time grows with the text, not faster: a quarter of it takes about a quarter of the time
    (CPU time: the machine may be busy with other work), and a megabyte stays within seconds.
    A fixed 2 s bound alone failed on a busy machine at 2.2 s for a pattern that takes 1.8 s
    idle and grows linearly."""
    text, redactor = PATHOLOGICAL[name], Redactor.from_config()
    quarter, whole = (_timed(redactor, t) for t in (text[: len(text) // 4], text))
    assert whole < 8 * quarter + 0.2, f"{quarter:.2f} s for a quarter, {whole:.2f} s for the whole"
    assert whole < 5.0


def test_a_megabyte_of_notes_is_fast():
    note = (
        f"## 2024-05-14 standup\n\nDeployed {'3f9a1c0e7b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a'} to prod; the token "
        "limit of 4096 was hit twice. See [[Secrets handling]] and https://github.com/acme/mem/pull/482.\n"
        f"- password: hunter2\n- key {GITHUB}\n\n"
    )
    text = (note * (1 + (1 << 20) // len(note)))[: 1 << 20]
    redactor = Redactor.from_config()
    best = min(_timed(redactor, text) for _ in range(3))
    assert best < 0.5, f"{best * 1000:.0f} ms for 1 MiB"  # ~50 ms on an idle machine; generous for shared CI


def _timed(redactor: Redactor, text: str) -> float:
    started = time.process_time()  # CPU time: what redaction costs, not how busy the machine is
    redactor.redact(text)
    return time.process_time() - started


def _scorer():
    spec = importlib.util.spec_from_file_location("bench_secrets", REPO / "bench" / "bench_secrets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_corpus_precision_and_recall_meet_the_targets():
    bench = _scorer()
    positives = bench.load_jsonl(CORPUS / "positives.jsonl")
    negatives = bench.load_jsonl(CORPUS / "negatives.jsonl")
    assert len(positives) >= 200 and len(negatives) >= 200
    doc = bench.score(Redactor.from_config(), positives, negatives)
    assert doc["precision"] >= 0.99, doc["false_positive_cases"]
    assert doc["recall"] >= 0.95, doc["false_negative_cases"]


def test_heldout_is_scored_on_its_own():
    """heldout.jsonl was written after the detector and never tuned on: these bounds guard
    against regressions below the first measurement (precision 1.0, recall 0.74), they are
    not targets. The context families came later, from their descriptions, not from its records."""
    bench = _scorer()
    heldout = bench.load_jsonl(CORPUS / "heldout.jsonl")
    assert len(heldout) >= 30
    doc = bench.score(
        Redactor.from_config(), [r for r in heldout if "secrets" in r], [r for r in heldout if "secrets" not in r]
    )
    assert doc["positives"] and doc["negatives"]
    assert doc["precision"] >= 0.95 and doc["recall"] >= 0.7, (doc["false_positive_cases"], doc["false_negative_cases"])


def test_committed_corpus_is_what_the_generator_writes(tmp_path):
    bench = _scorer()
    bench.regenerate(tmp_path)
    for name in ("positives.jsonl", "negatives.jsonl"):
        assert (tmp_path / name).read_bytes() == (CORPUS / name).read_bytes(), name


def test_modules_need_only_the_standard_library_and_errors():
    """redact.py (the Redactor) imports the rules and errors; the rules the shapes (and the command-line
    finder); the shapes nothing of memcli."""
    from memcli.secrets import commands as secret_commands
    from memcli.secrets import links as secret_links
    from memcli.secrets import prose as secret_prose
    from memcli.secrets import shapes as secret_shapes

    allowed = {
        "__future__",
        "base64",
        "binascii",
        "re",
        "collections",
        "dataclasses",
        "functools",
        "itertools",
        "typing",
        "memcli",
    }
    rules = ["memcli.secrets.shapes"]
    for module, memcli_imports in (
        (
            redact_module,
            [
                "memcli.errors",
                "memcli.secrets.links",
                "memcli.secrets.prose",
                "memcli.secrets.rules",
                "memcli.secrets.shapes",
            ],
        ),
        (secret_rules, ["memcli.secrets.commands", *rules]),
        (secret_commands, rules),
        (secret_prose, rules),
        (secret_links, rules),
        (secret_shapes, []),
    ):
        source = Path(module.__file__).read_text(encoding="utf-8")
        imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
        assert all(line.split()[1].split(".")[0] in allowed for line in imports), module.__name__
        assert [line.split()[1] for line in imports if "memcli" in line] == memcli_imports, module.__name__


def test_public_api_is_unchanged_by_the_split():
    from memcli.secrets.redact import KINDS, MARKER, Finding, Redactor, default_redactor, is_secret_key, redact  # noqa: F401

    assert is_secret_key is secret_rules.is_secret_key and is_secret_key("db_password")
    assert default_redactor().redact("password=hunter22") == redact("password=hunter22")
    assert MARKER.fullmatch("[REDACTED:password]") and "password" in KINDS


# ---------------------------------------------------------------- secrets as people write them
AZURE_KEY = "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NQ=="
SAS_SIG = "Xy7%2Bq3L0mZp9aQ%2FvTb4kR8sNn1cDdE5fGh6jK2lM0oP%3D"
DISCORD = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
# what a user reported kept verbatim through every writer: (text, values that must go, what must be left)
REPORTED = [
    (
        "My password for the staging admin is Tr0ub4dor&3-Lumen and the root password on logs-02 is hunter2-Xq9!zz",
        ["Tr0ub4dor&3-Lumen", "hunter2-Xq9!zz"],
        "My password for the staging admin is [REDACTED:password] and the root "
        "password on logs-02 is [REDACTED:password]",
    ),
    (
        "The passphrase for the GPG key is 'correct horse battery staple'.",
        ["correct horse battery staple"],
        "The passphrase for the GPG key is '[REDACTED:password]'.",
    ),
    ("login admin / Sommer2026!", ["Sommer2026!"], "login admin / [REDACTED:password]"),
    (
        "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&spr=https"
        f"&sig={SAS_SIG}",
        [SAS_SIG],
        "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r"
        "&se=2026-01-01T00:00:00Z&spr=https&sig=[REDACTED:signed_url]",
    ),
    (
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
        [AZURE_KEY],
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:azure_key];"
        "EndpointSuffix=core.windows.net",
    ),
    (
        f"https://discord.com/api/webhooks/1234567890123456789/{DISCORD}",
        [DISCORD],
        "https://discord.com/api/webhooks/1234567890123456789/[REDACTED:webhook_url]",
    ),
    ("my PIN is 4821", ["4821"], "my PIN is [REDACTED:pin]"),
    ("wifi password: BerlinGuest2026!", ["BerlinGuest2026!"], "wifi password: [REDACTED:password]"),
]


@pytest.mark.parametrize("text,values,expected", REPORTED, ids=[f"reported-{i}" for i in range(len(REPORTED))])
def test_reported_cases_go_whole(text, values, expected):
    out, kinds = redact(text)
    assert out == expected
    assert not any(v in out for v in values) and len(kinds) == len(values)
    assert redact(out) == (out, [])  # and stay redacted


PEM_BODY = (
    "MIIEowIBAAKCAQEA7dGx2lW3Y9kQv8Zr1Tn5Lp0Hs6Jm4Ca2Ge8Ru\nNf3Lr9Tz4Wv7Yb1Kd6Hs3Jm0Px5Ca8Ge2Ru4VwXyZ0aBcDeFgHiJkL"
)
PPK_PRIVATE = "AAAAIQDJd6bYv5Zq3Lm8Nw2Rt4Ys6Ua1Oc9Ie7Gd0Hf3Kj5Pl8Mn2Qb4Xz"
WRITTEN = [  # (family, text, value): one way people write each, in sentences, commands, URLs and key files
    ("sentence", "The password to the NAS is Kx7#mQ2v — don't share it.", "Kx7#mQ2v"),
    ("sentence", "FYI the db password on prod-db-3 was changed to Vy6!rT2q#Lm", "Vy6!rT2q#Lm"),
    ("sentence", "I changed my Gmail password to Blue-Heron-1987!", "Blue-Heron-1987!"),
    (
        "sentence",
        'Use the passphrase "purple monkey dishwasher 42" to unlock the backup.',
        "purple monkey dishwasher 42",
    ),
    ("sentence", "User admin, password Kr4k3n!Sea", "Kr4k3n!Sea"),
    ("sentence", "the new password will be Xk9#mm2L", "Xk9#mm2L"),
    ("sentence", "the vault token for CI is hvs.CAESIJ7xK9mq2LwRt4ZbYpN3sVd8", "hvs.CAESIJ7xK9mq2LwRt4ZbYpN3sVd8"),
    (
        "sentence",
        "the API token for the staging cluster is 7f3c9a1e5b2d8f4c6a0e1b3d5f7a9c2e",
        "7f3c9a1e5b2d8f4c6a0e1b3d5f7a9c2e",
    ),
    ("login", "login: deploy / Qw9$zX2!pL", "Qw9$zX2!pL"),
    ("login", "Zugangsdaten: admin / Bratwurst#42", "Bratwurst#42"),
    ("pin", "The bank card PIN is 7306.", "7306"),
    ("pin", "the door code is 2580#", "2580#"),
    ("de", "Das Passwort für den Server ist Fr1tz-Box#77.", "Fr1tz-Box#77"),
    ("de", "Mein WLAN-Passwort lautet Sonnenblume2026!", "Sonnenblume2026!"),
    ("fr", "Le mot de passe du routeur est Fromage-42!", "Fromage-42!"),
    ("fr", "mot de passe : Baguette2025?", "Baguette2025?"),
    ("es", "La contraseña del wifi es Paella-Valencia-7.", "Paella-Valencia-7"),
    ("es", "El PIN de la tarjeta es 5530", "5530"),
    ("zh", "我的邮箱密码是 Qq-Mail-2024!", "Qq-Mail-2024!"),
    ("zh", "数据库的密码我改成 Lotus-River-88 了", "Lotus-River-88"),
    ("zh", "账号 admin 密码 Sommer2026!", "Sommer2026!"),
    ("ja", "管理画面のパスワードは「Tokyo#Tower333」です。", "Tokyo#Tower333"),
    ("ja", "暗証番号は 4721 です", "4721"),
    ("ko", "비밀번호는 Seoul-Night-99 입니다", "Seoul-Night-99"),
    ("ko", "비밀번호를 Busan#2024로 바꿨어", "Busan#2024"),
    ("ru", "Пароль от сервера: Matr3shka!42", "Matr3shka!42"),
    ("command", "curl -u admin:Zt8#pQ1w https://jenkins.acme.dev/api/json", "Zt8#pQ1w"),
    ("command", "mysql -h db.acme.lan -u root -pR00t-Pw-2024 app", "R00t-Pw-2024"),
    ("command", "sshpass -p 'hunter2-Xq9' ssh deploy@10.0.4.12", "hunter2-Xq9"),
    ("command", "PGPASSWORD=Pg-Sup3r-S3cret psql -h db -U postgres", "Pg-Sup3r-S3cret"),
    ("command", "lftp -u backup,Bkp-2024!x sftp://nas.lan", "Bkp-2024!x"),
    (
        "config",
        '<add key="ApiToken" value="f0pdmhQjt2CknwDXedR5nTKfyVYSnTH4xdnyuZ0i" />',
        "f0pdmhQjt2CknwDXedR5nTKfyVYSnTH4xdnyuZ0i",
    ),
    (
        "url",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=q8Nf2+Lr9Tz4Wv7Yb1Kd6Hs3Jm0"
        "Px5Ca8Ge2Ru4VwX=",
        "q8Nf2+Lr9Tz4Wv7Yb1Kd6Hs3Jm0Px5Ca8Ge2Ru4VwX=",
    ),
    (
        "url",
        "https://s3.amazonaws.com/b/k.gz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d8"
        "6835f995330da4c265957d157751f604d404",
        "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
    ),
    (
        "url",
        "https://acme.webhook.office.com/webhookb2/989e51bb-2ab2-42e1-a7b0-2a0ca41a29f6@134739d6-904c-4062-a549-45a4d401"
        "408d/IncomingWebhook/d009da6c257c8ff9b451f6636f6b4b80/5d1e3b6a-0c2f-4e8a-9b7d-1f2e3d4c5b6a",
        "d009da6c257c8ff9b451f6636f6b4b80",
    ),
    (
        "url",
        "the deploy hook is https://ci.acme.dev/hooks/deploy?token=8c1f0e2d9b7a4c3e5f60718293a4b5c6",
        "8c1f0e2d9b7a4c3e5f60718293a4b5c6",
    ),
    (
        "url",
        "https://tiles.mapvendor.example/v3/a.png?key=A6kg8VAWj55YzmLGvuZf7rNBFQ7f9cIA",
        "A6kg8VAWj55YzmLGvuZf7rNBFQ7f9cIA",
    ),
    (
        "url",
        "Mattermost incoming hook: https://chat.acme.dev/hooks/86wetledohfophvbqjdqklq6qa",
        "86wetledohfophvbqjdqklq6qa",
    ),
    ("jwt", f"the session cookie was {JWT} when it broke", JWT),
    ("key", f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----", PEM_BODY),
    ("key", f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}\n-----END EC PRIVATE KEY-----", PEM_BODY),
    ("key", f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{PEM_BODY}\n-----END ENCRYPTED PRIVATE KEY-----", PEM_BODY),
    ("key", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----", PEM_BODY),
    (
        "key",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n{PEM_BODY}\n-----END PGP PRIVATE KEY BLOCK-----",
        PEM_BODY,
    ),
    (
        "key",
        f'---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "rsa-key"\n{PEM_BODY}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----',
        PEM_BODY,
    ),
    (
        "key",
        f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\n"
        f"Private-Lines: 1\n{PPK_PRIVATE}\nPrivate-MAC: 3f9a1c0e7b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a",
        PPK_PRIVATE,
    ),
    (
        "key",
        "age identity: AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS2X7K9L",
        "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS2X7K9L",
    ),
]


@pytest.mark.parametrize("family,text,value", WRITTEN, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(WRITTEN)])
def test_secrets_as_people_write_them(family, text, value):
    out, kinds = redact(text)
    assert value not in out and "[REDACTED:" in out, out
    assert not any(len(part) >= 6 and part in out for part in value.split("\n")), out  # no fragment left behind


SAID_ABOUT = [  # prose about passwords, PINs, tokens, keys and URLs: kept as written
    "I reset my password for the staging admin yesterday.",
    "The password for the staging admin is stored in 1Password.",
    "The root password on logs-02 is the same as on logs-01.",
    "The passphrase for the GPG key is in the team vault.",
    "Password policy is at least 12 characters with one symbol.",
    "The PIN is 4 digits long.",
    "Pin the dependency to 2.31.0 before the release.",
    "pin 13 on the Raspberry Pi is GPIO27",
    "login: POST /api/v1/session",
    "login / logout buttons are misaligned on mobile",
    "Error code 4821 means the card was declined.",
    "The token limit is 128000.",
    "the API key is rotated every 90 days",
    "The key for the padlock is in the drawer.",
    "Stripe secret keys are sk_live_* or sk_test_*.",
    "The password field is 'required' in the form schema.",
    "Das Passwort ist abgelaufen.",
    "Le mot de passe est incorrect.",
    "La contraseña: pregúntale a Ana",
    "パスワードを忘れました。",
    "비밀번호는 12자 이상이어야 합니다",
    "密码长度至少 12 位",
    "用户名: admin（密码见 1Password）",
    "AccountKey=<your-account-key>;",
    "append &sig=<signature> to the URL",
    "https://discord.com/api/webhooks/<id>/<token>",
    "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey",
    "https://github.com/acme/app/settings/hooks/123456789",
    "https://example.com/search?q=password+reset&key=value",
    "see https://example.com/webhooks/stripe_payment_intent_succeeded_v2 for the handler",
    "https://x.dev/api?key=customer_billing_address_v2",
    "aws ec2 describe-instances --query 'Reservations[].Instances[].Tags[?Key==`Name`]|[0].Value'",
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBGB8a1sBEAC7Xn5s0kZ8e7Yp2Lq1\n-----END PGP PUBLIC KEY BLOCK-----",
    "The PuTTY-User-Key-File format is documented in the PuTTY manual.",
    '<add key="ConnectionTimeout" value="30" />',
    "arn:aws:secretsmanager:us-east-1:648750227261:secret:prod/db-credentials",
]


@pytest.mark.parametrize("text", SAID_ABOUT)
def test_prose_about_secrets_is_kept(text):
    assert redact(text) == (text, [])


def test_closing_punctuation_goes_with_the_value_unless_it_is_the_sentences():
    assert redact("the password is Tr0ub4dor&3-Lumen.")[0] == "the password is [REDACTED:password]."
    assert redact("(password: Xq9zz!7p)")[0] == "(password: [REDACTED:password])"
    assert redact("Her iCloud password is Maple&Syrup_99?")[0] == "Her iCloud password is [REDACTED:password]"
    assert (
        redact("His laptop password is Schatzi1985, mine is different.")[0]
        == "His laptop password is [REDACTED:password], mine is different."
    )
    assert redact("The password is Gr33n-Tea-Time...")[0] == "The password is [REDACTED:password]..."


@pytest.mark.parametrize(
    "name,text",
    [
        ("qualified nouns", "password for the a b c d e f g h " * 30_000),
        ("pins", "pin is 1234 " * 80_000),
        ("logins", "login a / " * 100_000),
        ("cjk nouns", "密码我改成" * 200_000),
        ("hooks", "https://x/hooks/" * 60_000),
        ("signatures", "?sig=" * 200_000),
        ("keys", "&key=" * 200_000),
        ("putty", "PuTTY-User-Key-File-2: x\n" * 40_000),
        ("ssh2 begin lines", "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n" * 25_000),
        ("mot de passe", "mot de passe " * 80_000),
        ("bare passwords", "password " * 110_000),
        ("quoted passphrases", "passphrase '" * 90_000),
    ],
)
def test_new_rules_stay_linear(name, text):
    """Four times the text costs about four times the time (a backtracking rule costs sixteen):
    a ratio, so a slower machine does not fail it (the whole text takes ~2 s here)."""

    def cpu(t: str) -> float:
        started = time.process_time()
        redact(t)
        return time.process_time() - started

    quarter, whole = cpu(text[: len(text) // 4]), cpu(text)
    assert whole < 8 * quarter + 0.05, (name, quarter, whole)


def test_the_sentences_dev_set_and_every_heldout_set():
    """sentences.jsonl is the dev set the sentence rules were tuned on (targets); every heldout*.jsonl
    is scored on its own and never tuned on (regression bounds below the measured figures)."""
    bench = _scorer()
    records = bench.load_jsonl(CORPUS / "sentences.jsonl")
    assert len(records) >= 150 and any("密码" in r["text"] for r in records)
    doc = bench.score(
        Redactor.from_config(), [r for r in records if "secrets" in r], [r for r in records if "secrets" not in r]
    )
    assert doc["positives"] >= 100 and doc["negatives"] >= 80
    assert doc["precision"] >= 0.99 and doc["recall"] >= 0.97, (
        doc["false_positive_cases"],
        doc["false_negative_cases"],
    )
    for path in sorted(CORPUS.glob("heldout*.jsonl")):
        held = bench.load_jsonl(path)
        doc = bench.score(
            Redactor.from_config(), [r for r in held if "secrets" in r], [r for r in held if "secrets" not in r]
        )
        assert doc["precision"] >= 0.95 and doc["recall"] >= 0.7, (path.name, doc["false_negative_cases"])
