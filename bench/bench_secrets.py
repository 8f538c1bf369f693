#!/usr/bin/env python3
"""Precision and recall of memcli.secrets.redact on a labelled corpus: one JSON document on stdout.

    python bench/bench_secrets.py                  # score tests/data/secrets/*.jsonl, each set on its own
    python bench/bench_secrets.py --details        # also every replacement of every record
    python bench/bench_secrets.py --regenerate     # rewrite positives.jsonl and negatives.jsonl (fixed seed)

Scoring. A listed secret is recalled when it no longer occurs in the redacted text and
a `[REDACTED:` marker does. Precision is per replacement: one that overlaps a listed
secret is a true positive; one in a negative text, or in a positive text away from every
listed secret, is a false positive. sentences.jsonl (the dev set: secrets as people write
them in sentences, on command lines, in connection strings and signed URLs, in several
languages) and every heldout*.jsonl (written by hand, never tuned on) mix both kinds of
records; each is scored on its own, under its file name.

The secrets are fake but format-valid (right prefix, alphabet and length), drawn from a
seeded generator; a few carry EXAMPLE/FAKE segments, most do not, so the detector can
not lean on those words. The negatives follow a list of hard cases written up front
(hashes, UUIDs, digests, error codes, versions, paths, URLs, placeholders, prose about
passwords, public keys, publishable keys, IDs of other systems).
"""

from __future__ import annotations

import argparse
import base64
import importlib
import json
import random
import string
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = REPO / "tests" / "data" / "secrets"
SEED = 20240521
MARKER = "[REDACTED:"

UP, LO, DIG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM, HEX, B32 = UP + LO + DIG, "0123456789abcdef", UP + "234567"
URLSAFE, B64 = ALNUM + "_-", ALNUM + "+/"


# ---------------------------------------------------------------- fake secrets


class Fake:
    """Format-valid fake secrets and filler values, all from one seeded generator."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def pick(self, *options):
        return self.rng.choice(options)

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(bytes(self.rng.randrange(256) for _ in range(nbytes))).decode()

    def b64url(self, data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    def uuid(self) -> str:
        h = self.s(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.pick(*'89ab')}{h[17:20]}-{h[20:]}"

    def openai_key(self) -> str:
        return self.pick(
            lambda: "sk-" + self.s(ALNUM, 20) + "T3BlbkFJ" + self.s(ALNUM, 20),
            lambda: "sk-proj-" + self.s(URLSAFE, 74) + "T3BlbkFJ" + self.s(URLSAFE, 74),
            lambda: "sk-proj-FAKE" + self.s(URLSAFE, 60),
            lambda: "sk-svcacct-" + self.s(URLSAFE, 64),
            lambda: "sk-" + self.s(HEX, 32),  # DashScope / DeepSeek style
        )()

    def anthropic_key(self) -> str:
        kind = self.pick("api03", "api03", "admin01")
        return f"sk-ant-{kind}-" + self.s(URLSAFE, 93) + "AA"

    def aws_access_key_id(self) -> str:
        if self.rng.random() < 0.2:
            return "AKIA" + self.s(B32, 9) + "EXAMPLE"
        return self.pick("AKIA", "AKIA", "ASIA") + self.s(B32, 16)

    def aws_secret_key(self) -> str:
        if self.rng.random() < 0.2:
            return self.s(B64, 30) + "EXAMPLEKEY"
        return self.s(B64, 40)

    def github_token(self) -> str:
        if self.rng.random() < 0.3:
            return "github_pat_11" + self.s(UP + DIG, 20) + "_" + self.s(ALNUM, 59)
        return self.pick("ghp_", "ghp_", "gho_", "ghs_", "ghu_") + self.s(ALNUM, 36)

    def slack_token(self) -> str:
        return self.pick(
            lambda: f"xoxb-{self.s(DIG, 12)}-{self.s(DIG, 13)}-{self.s(ALNUM, 24)}",
            lambda: f"xoxp-{self.s(DIG, 11)}-{self.s(DIG, 11)}-{self.s(DIG, 13)}-{self.s(HEX, 32)}",
            lambda: f"xapp-1-A0{self.s(UP + DIG, 9)}-{self.s(DIG, 13)}-{self.s(HEX, 64)}",
        )()

    def slack_webhook(self) -> tuple[str, str]:
        token = self.s(ALNUM, 24)
        return f"https://hooks.slack.com/services/T{self.s(UP + DIG, 8)}/B{self.s(UP + DIG, 10)}/{token}", token

    def google_api_key(self) -> str:
        return "AIzaSy" + self.s(URLSAFE, 33)

    def google_oauth(self) -> str:
        return self.pick(lambda: "GOCSPX-" + self.s(URLSAFE, 28), lambda: "ya29.a0" + self.s(URLSAFE, 120))()

    def stripe_key(self) -> str:
        prefix = self.pick("sk_live_", "sk_live_", "rk_live_", "sk_test_")
        if self.rng.random() < 0.25:
            return "whsec_" + self.s(ALNUM, 32)
        return prefix + self.pick("51" + self.s(ALNUM, 97), self.s(ALNUM, 24))

    def jwt(self) -> str:
        header = {"alg": self.pick("HS256", "RS256", "ES256"), "typ": "JWT"}
        claims = {"sub": self.uuid(), "iat": 1715000000 + self.rng.randrange(10**6), "role": self.pick("admin", "user")}

        def part(d):
            return self.b64url(json.dumps(d, separators=(",", ":")).encode())

        return f"{part(header)}.{part(claims)}.{self.b64url(bytes(self.rng.randrange(256) for _ in range(32)))}"

    def pem(self) -> str:
        label = self.pick(
            "RSA PRIVATE KEY",
            "PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "DSA PRIVATE KEY",
        )
        body = "MII" + self.b64(self.rng.randrange(180, 400))
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])

    def password(self) -> str:
        return self.pick(
            lambda: self.pick(
                "hunter2",
                "Tr0ub4dor&3",
                "Summer2024!",
                "P@ssw0rd-db-17",
                "letmein123",
                "Winter#2023",
                "qwerty!234",
                "S3cure-Passw0rd",
                "admin1234",
                "MyDogRex2019",
                "BlueMoon$88",
                "pass_w0rd_2",
                "Kx7!vR2#pQ9z",
                "dr4gon-F1re",
            ),
            lambda: self.s(ALNUM, self.rng.randrange(12, 20)),
            lambda: self.s(ALNUM + "!@#$%^&*-_", 16),
            lambda: self.b64(18),
            lambda: self.s(HEX, 32),
        )()

    def opaque_token(self) -> str:
        return self.pick(
            lambda: self.s(ALNUM, 40), lambda: self.s(HEX, 40), lambda: self.uuid(), lambda: "tok_" + self.s(ALNUM, 28)
        )()


# ---------------------------------------------------------------- corpus templates
# One template per line, "\n" inside a line is a line break. {s} is the secret, {id} an
# AWS access key id (listed as a secret too), {url} a whole Slack webhook URL.

POSITIVES = r"""
@@ openai_key
here's the key you asked for: {s} (rotate it after the demo)
Can you check why {s} keeps returning 401?
OPENAI_API_KEY={s}
export OPENAI_API_KEY="{s}"
{"openai": {"api_key": "{s}", "model": "gpt-4o-mini"}, "timeout": 30}
llm:\n  provider: openai\n  api_key: {s}\n  retries: 3
$ curl -s https://api.openai.com/v1/models -H "Authorization: Bearer {s}"
2024-05-14T09:12:44.120Z ERROR openai.AuthenticationError: Incorrect API key provided: {s}.
## Staging\n\nThe staging key is `{s}`, ask Dana before using it.
```\nOPENAI_API_KEY={s}\n```
新的 API 密钥：{s}，请勿提交到仓库。
昨日発行したキー {s} はもう無効です。
client = OpenAI(api_key="{s}")
- {s}
Note to self: {s} is the prod one, don't mix it up with the eval key.
> pasted in #general by mistake: {s}
docker run --rm -e OPENAI_API_KEY={s} ghcr.io/acme/agent:latest
DASHSCOPE_API_KEY: {s}
user: the agent keeps failing, my key is {s} if that helps
| env | key |\n|---|---|\n| prod | {s} |
[llm]\nkey = "{s}"
mem remember "switched to the new key {s} on 2024-05-02"
set OPENAI_API_KEY={s} && python run.py
{"role": "user", "content": "use this: {s}"}
@@ anthropic_key
ANTHROPIC_API_KEY={s}
The Claude key for the eval harness: {s}
{"anthropic": {"apiKey": "{s}"}}
export ANTHROPIC_API_KEY='{s}'
client = anthropic.Anthropic(api_key="{s}")
curl https://api.anthropic.com/v1/messages -H "x-api-key: {s}" -H "anthropic-version: 2023-06-01"
anthropic:\n  key: {s}
密钥换成了 {s}
Rotated: old key {s} revoked at 14:02.
- [ ] revoke {s} before Friday
WARN using fallback key {s} from ~/.config/agent.toml
I think {s} belongs to the research org.
@@ aws_access_key_id
AWS_ACCESS_KEY_ID={s}
The CI user's key id is {s}.
aws_access_key_id = {s}
{"AccessKeyId": "{s}", "Expiration": "2024-05-14T12:00:00Z"}
2024-05-14 10:01:02 INFO boto3 using credentials {s} from env
found {s} in the terraform state, rotate it
- key id: `{s}`
export AWS_ACCESS_KEY_ID="{s}"
访问密钥 ID：{s}
aws iam delete-access-key --access-key-id {s} --user-name ci
User ci has access key {s} (Active, created 2023-11-02).
Credentials: {s} (eu-west-1 deploy user)
@@ aws_secret_key
[default]\naws_access_key_id = {id}\naws_secret_access_key = {s}\nregion = eu-west-1
AWS_SECRET_ACCESS_KEY={s}
{"AccessKeyId": "{id}", "SecretAccessKey": "{s}", "SessionToken": null}
aws keys for the backup bucket: {id} / {s}
aws configure set aws_secret_access_key {s}
export AWS_ACCESS_KEY_ID={id}\nexport AWS_SECRET_ACCESS_KEY={s}
provider "aws" {\n  access_key = "{id}"\n  secret_key = "{s}"\n}
AWS_SECRET_ACCESS_KEY: "{s}"
here are the aws creds Jo sent: id {id}, secret {s}
s3cmd --access_key={id} --secret_key={s} ls s3://acme-backups
aws_secret_access_key={s}
AWS 的 secret key 是 {s}，用完删掉。
@@ github_token
GITHUB_TOKEN={s}
git clone https://{s}@github.com/acme/private-repo.git
The deploy bot token is {s}, it has repo scope.
{"github": {"token": "{s}"}}
gh auth login --with-token <<< {s}
Authorization: token {s}
- name: checkout\n  with:\n    token: {s}
echo {s} | docker login ghcr.io -u ci-bot --password-stdin
//npm.pkg.github.com/:_authToken={s}
2024-05-14T09:00:00Z DEBUG github: GET /repos/acme/mem token={s} -> 200
export GH_TOKEN={s}
GitHub 令牌：{s}（只读）
pasting my PAT so you can reproduce: {s}
remote: Invalid username or password.\nfatal: Authentication failed for 'https://ci:{s}@github.com/acme/mem.git/'
GH_TOKEN: {s}
token {s} expires in 7 days
[credential]\n  helper = store\n# https://x-access-token:{s}@github.com
Fine-grained token for the docs site: {s}
machine github.com login ci password {s}
{s}
@@ slack_token
SLACK_BOT_TOKEN={s}
The bot token is {s}; the app id is A06TRKQ4G1M.
slack:\n  token: {s}\n  channel: C024BE91L
curl -H "Authorization: Bearer {s}" https://slack.com/api/auth.test
{"ok": true, "access_token": "{s}", "team": {"id": "T061EG9R6"}}
Slack token leaked in the screenshot: {s}
export SLACK_APP_TOKEN={s}
WebClient(token="{s}")
Slack 机器人 token：{s}
- slack: {s}
ERROR slack_sdk.errors.SlackApiError: invalid_auth (token {s})
new user token after reinstall: {s}
@@ slack_webhook
SLACK_WEBHOOK_URL={url}
curl -X POST -H 'Content-type: application/json' --data '{"text":"deploy done"}' {url}
alerts go to {url} (#ops-alerts)
webhook: "{url}"
@@ google_api_key
GOOGLE_API_KEY={s}
<script src="https://maps.googleapis.com/maps/api/js?key={s}&callback=initMap"></script>
The Gemini key is {s}.
{"type": "gemini", "apiKey": "{s}"}
genai.configure(api_key="{s}")
curl "https://generativelanguage.googleapis.com/v1beta/models?key={s}"
firebaseConfig = { apiKey: "{s}", authDomain: "acme-prod.firebaseapp.com" }
GEMINI_API_KEY: {s}
Google 地图 key：{s}
found {s} hard-coded in app/src/main/res/values/strings.xml
@@ google_oauth
"client_secret": "{s}"
GOOGLE_CLIENT_SECRET={s}
access token from gcloud: {s}
curl -H "Authorization: Bearer {s}" https://www.googleapis.com/drive/v3/files
@@ stripe_key
STRIPE_SECRET_KEY={s}
stripe.api_key = "{s}"
The live key is {s}, do not run the migration script with it.
{"stripe": {"secret_key": "{s}"}}
curl https://api.stripe.com/v1/charges -u {s}:
export STRIPE_WEBHOOK_SECRET={s}
stripe:\n  secret: {s}
Stripe 密钥：{s}
ERROR stripe.error.AuthenticationError: Invalid API Key provided: {s}
restricted key for the reporting job: {s}
- [x] moved {s} into the secret store
const stripe = require('stripe')('{s}');
@@ jwt
Authorization: Bearer {s}
the session cookie was {s}; it decodes to admin
{"access_token": "{s}", "token_type": "Bearer", "expires_in": 3600}
curl -H 'Authorization: Bearer {s}' https://api.internal/v1/me
id_token={s}
2024-05-14T09:12:44Z DEBUG auth: verified {s}
JWT_FOR_TESTS={s}
Set-Cookie: session={s}; HttpOnly; Secure
登录后拿到的 token：{s}
copy this into jwt.io: {s}
wss://realtime.example.com/socket?token={s}
supabase anon key {s}
@@ private_key
{s}
Here is the deploy key:\n\n{s}\n\nadd it to the runner.
{"type": "service_account", "project_id": "acme-prod", "private_key": "{json_pem}", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}
```\n{s}\n```
ssh_key: |\n{indented_pem}
cat > ~/.ssh/id_rsa <<EOF\n{s}\nEOF
私钥如下：\n{s}
TLS_KEY="{s}"
> {quoted_pem}
{truncated_pem}
the key Jo pasted (cut off): {truncated_pem}
- key:\n\n{s}
@@ gitlab_token
GITLAB_TOKEN={s}
git clone https://oauth2:{s}@gitlab.com/acme/infra.git
the gitlab PAT is {s}
CI_JOB_TOKEN override: {s}
@@ npm_token
//registry.npmjs.org/:_authToken={s}
NPM_TOKEN={s}
npm token created: {s}
publish token {s} (automation)
@@ huggingface_token
HF_TOKEN={s}
huggingface-cli login --token {s}
the HF read token: {s}
from huggingface_hub import login; login("{s}")
@@ sendgrid_key
SENDGRID_API_KEY={s}
sendgrid key for the newsletter: {s}
sg = SendGridAPIClient("{s}")
@@ bearer_token
Authorization: Bearer {s}
curl -H "Authorization: Bearer {s}" https://api.acme.dev/v2/projects
headers = {"Authorization": "Bearer {s}"}
-H 'authorization: bearer {s}'
GET /v1/orders HTTP/1.1\nHost: api.acme.dev\nAuthorization: Bearer {s}
fetch(url, { headers: { Authorization: `Bearer {s}` } })
@@ basic_auth
Authorization: Basic {s}
curl -H "Authorization: Basic {s}" https://registry.acme.dev/v2/_catalog
headers: {"Authorization": "Basic {s}"}
proxy-authorization: Basic {s}
@@ url_password
DATABASE_URL=postgres://app:{s}@db.internal:5432/app
mongodb+srv://admin:{s}@cluster0.x7kq2.mongodb.net/?retryWrites=true
REDIS_URL=redis://:{s}@cache.internal:6379/0
amqp://svc_orders:{s}@rabbit.internal:5672/orders
git remote set-url origin https://deploy:{s}@git.acme.dev/acme/mem.git
sqlalchemy.url = mysql+pymysql://root:{s}@127.0.0.1:3306/app
连接串：postgresql://report:{s}@10.0.3.4/analytics
the broker is at mqtt://iot:{s}@broker.acme.dev:1883
pip install --index-url https://ci:{s}@pypi.acme.dev/simple/ acme-core
proxy: http://jo:{s}@proxy.corp:3128
CELERY_BROKER_URL: "redis://default:{s}@redis-12345.c1.cloud.redislabs.com:12345"
ftp://backup:{s}@nas.home.arpa/volume1/
@@ password
my password is {s}
the admin password is {s}, please change it after the first login
btw wifi password: {s}
new db password -> {s}
I set the password to {s}
root pw is {s}
{"db": {"host": "10.0.0.5", "user": "app", "password": "{s}"}}
{"username": "ci-bot", "passwd": "{s}"}
{"client_id": "3MVG9lKcPoNINVB", "client_secret": "{s}"}
"DB_PASSWORD": "{s}",
database:\n  user: app\n  password: {s}\n  pool: 5
spring:\n  datasource:\n    username: app\n    password: '{s}'
redis:\n  auth_token: {s}
smtp_pass: {s}
DB_PASSWORD={s}
export MYSQL_ROOT_PASSWORD='{s}'
REDIS_PASSWORD="{s}"
SECRET_KEY={s}
JWT_SECRET={s}
API_TOKEN={s}
mysql -u root --password={s} app
docker run -d -e POSTGRES_PASSWORD={s} postgres:16
curl -u admin:{s} https://jenkins.acme.dev/api/json
psql "host=db.internal user=app password={s} dbname=app sslmode=require"
acme-cli deploy --token {s} --env prod
Server=tcp:acme.database.windows.net,1433;Database=app;User ID=app;Password={s};Encrypt=true
jdbc:mysql://db:3306/app?user=app&password={s}&useSSL=true
2024-06-01 12:00:01 DEBUG connect user=app password={s} host=db
[auth] login attempt user=bob pass={s} ok=false
- **Password:** {s}
| user | password |\n|---|---|\n| admin | {s} |
Credentials for staging: admin / {s}
数据库密码是 {s}，不要外传。
测试账号：test01，密码：{s}
パスワードは {s} です
비밀번호: {s}
<settings><servers><server><id>nexus</id><username>deploy</username><password>{s}</password></server></servers></settings>
conn = psycopg2.connect(host="db", user="app", password="{s}")
PASSWORD = "{s}"
const apiToken = '{s}';
requests.get(url, auth=("admin", "{s}"))
[client]\nuser=root\npassword={s}
pwd = {s}
environment:\n  - POSTGRES_PASSWORD={s}\n  - POSTGRES_USER=app
X-Api-Key: {s}
the access token is {s}
use token {s} for the staging API
otpauth://totp/Acme:ana?secret={s}&issuer=Acme
Passphrase: {s}
ansible_become_pass: {s}
$password = '{s}';
api_key: {s}
"refresh_token": "{s}"
set the keystore password to {s} in gradle.properties: storePassword={s}
MYSQL_PASSWORD: {s}
--password {s}
The VPN password changed, it is now {s}
login: ana\npassword: {s}
pg_password = "{s}"
Wi-Fi 密码：{s}
""".strip()

# Human passwords that are plain words: realistic, and hard for a detector that needs
# the value to look random. They go only where a config or a sentence names them.
WORD_PASSWORDS = (
    "swordfish",
    "postgres",
    "dragonfly",
)
WORD_PASSWORD_TEMPLATES = (
    "the wifi password is {s}",
    "POSTGRES_PASSWORD: {s}",
    'db_password = "{s}"',
)

# {hN} N lowercase hex digits, {HN} uppercase hex, {bN} N base64 characters, {aN} N
# letters and digits, {uuid}. Each "@@ why" heading applies to the lines under it.
NEGATIVES = r"""
@@ git commit hash (40 hex)
Fixed in commit {h40} (see PR #482).
git revert {h40}
Bisect says the first bad commit is {h40}.
deploy sha={h40} env=prod
{"commit": "{h40}", "branch": "main", "dirty": false}
- uses: actions/checkout@{h40} # v4.1.7
tree {h40}\nparent {h40}\nauthor Ana <ana@example.com> 1715000000 +0000
commit {h40}\nAuthor: Lee <lee@example.org>\nDate:   Tue May 14 10:00:00 2024 +0000
SHA-1: {H40}
GIT_COMMIT={h40}
@@ git short hash (7-12 hex)
Merge: {h7} {h7}
HEAD is now at {h7} fix flaky test
{h7} (HEAD -> main, origin/main) Bump deps
git cherry-pick {h10}
Revision: {h12}
git diff {h7}..{h7} -- memcli/
The regression came in with {h9}.
__version__ = "0.4.0.dev3+g{h7}"
@@ UUID
request_id={uuid}
Trace {uuid} failed at step 3.
{"id": "{uuid}", "type": "note"}
session {uuid} resumed after 3 retries
Correlation-ID: {uuid}
tenant_id: {uuid}
client_id: {uuid}
DELETE /api/v1/jobs/{uuid} -> 204
x-request-id: {uuid}
See [[{uuid}]] for the raw log.
@@ digest labelled as such
image: ghcr.io/acme/api@sha256:{h64}
{h64}  memcli-0.4.0.tar.gz
Digest: sha256:{h64}
"integrity": "sha512-{b86}=="
etag: "{h32}"
md5sum: {h32}
checksum = "{h64}"
blake3 {h64} data/vault.tar
The SRI hash is sha384-{b64}.
version https://git-lfs.github.com/spec/v1\noid sha256:{h64}\nsize 1048576
Container {h64} exited with code 0
Bitcoin tx {h64} confirmed
@@ error code
connect ECONNREFUSED 127.0.0.1:5432
MongoServerError: E11000 duplicate key error collection: app.users index: email_1 dup key: { email: "a@b.c" }
HTTP 404 Not Found: /api/tokens/refresh
ORA-00942: table or view does not exist
SQLSTATE[23505]: Unique violation: 7 ERROR:  duplicate key value violates unique constraint "users_pkey"
Windows error 0x80070005 (E_ACCESSDENIED)
errno=ENOENT path=/etc/app/secrets.yaml
npm ERR! code E401\nnpm ERR! Unable to authenticate, need: Basic realm="GitHub Package Registry"
HTTP/1.1 401 Unauthorized\nWWW-Authenticate: Bearer realm="api", error="invalid_token"
psql: error: FATAL:  password authentication failed for user "app"
ssh: Permission denied (publickey,password).
error: invalid_grant (token expired)
CUDA error: CUBLAS_STATUS_NOT_INITIALIZED
Exit code 137 (OOMKilled)
net::ERR_TOO_MANY_REDIRECTS
AccessDenied: User: arn:aws:iam::123456789012:user/ci is not authorized to perform: s3:GetObject
InvalidClientTokenId: The security token included in the request is invalid.
SignatureDoesNotMatch: Check your key and signing method.
@@ version string
Upgraded to v1.2.3 from v1.1.9.
requires python>=3.10,<3.13
pydantic 2.8.3-beta.1
node v20.11.1 / npm 10.2.4
Release 2024.05.1-rc2
image: postgres:16.3-alpine3.19
kernel 6.5.0-35-generic
go version go1.22.3 linux/amd64
OpenSSL 3.0.13 30 Jan 2024 (Library: OpenSSL 3.0.13)
tokenizers==0.19.1, tiktoken==0.7.0
@@ file path
Secrets live in /run/secrets/db_password (mounted by compose).
cat ~/.ssh/id_ed25519.pub
key file: ~/.ssh/id_rsa
C:\Users\ana\AppData\Roaming\gcloud\credentials.db
cp .env.example .env
The token cache is at ~/.cache/huggingface/token
edit config/credentials.yml.enc with `rails credentials:edit`
password_file: /etc/mysql/debian.cnf
secret: /run/secrets/api_token
tokenizer_path=models/tokenizer.json
PWD=/home/ana/projects/mem
GOOGLE_APPLICATION_CREDENTIALS=/var/run/gcp/sa.json
@@ URL without credentials
https://github.com/acme/mem/pull/482
git@github.com:acme/mem.git
https://ana@dev.azure.com/acme/_git/mem
http://localhost:8080/api/v1/tokens?limit=50
https://platform.openai.com/api-keys
https://docs.stripe.com/keys#obtain-api-keys
redis://cache.internal:6379/0
postgres://db.internal:5432/app?sslmode=require
https://example.com/reset-password?step=2
See https://en.wikipedia.org/wiki/Password for the history.
s3://acme-backups/2024/05/14/dump.sql.gz
https://accounts.google.com/o/oauth2/auth?client_id=123-abc.apps.googleusercontent.com&response_type=code
@@ base64 data that is not a credential
data:image/png;base64,iVBORw0KGgo{b180}
echo aGVsbG8gd29ybGQ= | base64 -d
Content-Transfer-Encoding: base64\n\n{b76}\n{b76}
font: url(data:font/woff2;base64,d09GMgABA{b120})
"thumbnail": "data:image/jpeg;base64,/9j/4AAQSkZJRg{b96}"
X-Content-Hash: {b43}=
@@ identifier or word that contains a secret word
Switched the tokenizer to tiktoken cl100k_base.
pip install scikit-learn  # a.k.a. sklearn
Ported the sk-learn pipeline to polars.
Working on task-1234 and TASK-5678 today.
Branch feature/token-refresh-retry merged.
sk-1 and sk-2 are the two sidekiq nodes.
Kubernetes pod api-7d4b9c8f6-x2k9p restarted 3 times.
The function get_access_token_from_cache() returns None on a miss.
max_tokens: 4096
token_limit = 400
Prompt used 1532 tokens (limit 8192).
class PasswordResetView(FormView):
tests/test_auth.py::test_password_reset_flow PASSED
we need a secret-manager-backed config
API-Key-Rotation-Runbook.md
ecr-token-refresher CronJob completed
passwordless login via magic link
Passkeys replace passwords for staff accounts.
monkey: patched
keyboard: us-intl
@@ prefix or pattern named without a key
AWS access key ids start with AKIA (long-term) or ASIA (temporary).
Search the logs for AKIA to find leaked keys.
GitHub tokens have prefixes like ghp_, gho_ and github_pat_.
OpenAI project keys look like sk-proj-… and Anthropic ones like sk-ant-…
Slack bot tokens begin with xoxb- and user tokens with xoxp-.
Google API keys start with AIza.
Stripe secret keys are sk_live_* or sk_test_*; rk_live_* are restricted keys.
JWTs start with eyJ because base64('{"') is eyJ.
Role ids look like AROA3XFRBF535PLBIFPI6 and user ids like AIDAJQABLZS4A3QDU576Q.
The detector regex is AKIA[0-9A-Z]{16}.
@@ placeholder or reference, not a value
OPENAI_API_KEY=sk-...
export OPENAI_API_KEY=YOUR_API_KEY
Authorization: Bearer <token>
api_key: xxxxxxxxxxxxxxxxxxxxxxxx
password: ${DB_PASSWORD}
token: ${{ secrets.GITHUB_TOKEN }}
"password": "***"
password=changeme
GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX
api_key = os.environ["OPENAI_API_KEY"]
token = get_token()
password = getpass.getpass()
api_key=settings.OPENAI_API_KEY
SECRET_KEY=<generate with openssl rand -hex 32>
STRIPE_SECRET_KEY=sk_test_...
DB_PASSWORD=
password: null
token: ''
client_secret: REPLACE_ME
api_key: your-api-key-here
password: !secret wifi_password
password: "%(DB_PASSWORD)s"
password = ENV.fetch("DB_PASSWORD")
Set SLACK_BOT_TOKEN=xoxb-your-token in .env
AIzaSy... (truncated in the screenshot)
sk-proj-abc…xyz (masked in the dashboard)
Authorization: Bearer $TOKEN
curl -u $USER:$PASS https://jenkins.acme.dev/api/json
postgres://user:password@localhost/db
mysql://root:<password>@db/app
redis://:${REDIS_PASSWORD}@cache:6379
password: ********
api_key: REDACTED
Already scrubbed: [REDACTED:openai_key] and token=[REDACTED:password]
const apiKey = process.env.OPENAI_API_KEY;
password = os.environ.get('DB_PASSWORD')
token = request.headers.get('Authorization')
DB_PASSWORD: "{{ vault_db_password }}"
@@ prose about a secret, no value
The password is stored in Vault under kv/app/db.
Password reset flow sends a 6-digit code.
We hit the token limit of 400 on the summary step.
The secret sauce is caching.
Password: incorrect
Token: expired
the token is invalid after 15 minutes
password must be at least 12 characters
Never use password123, it is the first thing attackers try.
The API key is in 1Password under 'OpenAI prod'.
My password was rejected again.
the access token was revoked at 10:42
The secret is to batch writes.
Tokens are counted with tiktoken.
the password is the same as last year's
Forgot password? Click here.
the token is cached for 3600 seconds
Password: see 1Password
API key: ask @dana
secret: none
auth: oauth2
The secret key must be 32 bytes.
the default password is printed on the router label
The password for prod is in the vault.
Password policy: min 12 chars, one digit.
SECRET_KEY_BASE is set in credentials.yml.enc
My token budget is 2M per day.
Secret rotation runs every 90 days.
password is required
if (!token) throw new Error('missing token');
def check_password(password: str) -> bool:
@@ benign key in JSON/YAML
{"max_tokens": 4096, "temperature": 0.2}
{"secretName": "db-creds", "namespace": "prod"}
{"password_min_length": 12, "password_require_digit": true}
{"auth": {"type": "oauth2", "token_url": "https://auth.example.com/token"}}
{"token": "Hello", "logprob": -0.31, "bytes": [72, 101, 108, 108, 111]}
fetch(url, { credentials: "include" })
valueFrom:\n  secretKeyRef:\n    name: db-creds\n    key: password
tokenizer: cl100k_base
auth_method: password
token_endpoint_auth_method: client_secret_basic
grant_type=client_credentials
secret_ref: vault://kv/app#db
refresh_token_ttl: 30d
api_key_header: X-API-Key
use_token: true
TOKEN_EXPIRY=3600
password_reset_url = "https://example.com/reset"
"token_type": "bearer", "expires_in": 3600
class Settings(BaseSettings):\n    api_key: SecretStr\n    db_password: str
secret=true
@@ date, address, link, number
2024-05-14T09:12:44+02:00
Meeting moved to 2024-06-03.
10.0.12.7 - - [14/May/2024:09:12:44 +0000] "GET /health HTTP/1.1" 200 2
fe80::1ff:fe23:4567:890a%eth0
MAC 3c:22:fb:9a:01:7e
[[2024-05-14 standup]]
[[Projects/mem/Secrets handling|secrets handling]]
Phone: +1-415-555-0132
ISBN 978-3-16-148410-0
cron: 0 3 * * 1-5
@@ public key material
ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{b340} ana@laptop
ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b43} ana@laptop
-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{b20}\n{b64}\n{b64}\n-----END PUBLIC KEY-----
-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE{b44}\n{b64}\n{b64}\n-----END CERTIFICATE-----
-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF{b58}\n{b64}\n-----END PGP PUBLIC KEY BLOCK-----
github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl
-----BEGIN CERTIFICATE REQUEST-----\nMIICijCCAXICAQAwRTEL{b44}\n-----END CERTIFICATE REQUEST-----
SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 (ED25519 key fingerprint)
age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
authorized_keys: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b43} ci@runner
@@ Stripe publishable key (public by design)
STRIPE_PUBLISHABLE_KEY=pk_live_51{a97}
Stripe.setPublishableKey('pk_test_{a24}')
const stripe = Stripe("pk_live_{a24}");
NEXT_PUBLIC_STRIPE_KEY=pk_test_51{a97}
publishable key: pk_live_{a24}
@@ ID of another system
Refunded ch_3{a23} for cus_{a14}
Slack channel C024BE91L, user U012AB3CD, team T0001
arn:aws:iam::123456789012:role/ci-deploy
i-0abcd1234ef567890 in subnet-0bb1c79de3e2f4a11
traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
UA-12345678-1 and G-ABC123XYZ9
Order #A1B2-C3D4-E5F6
pod/web-5f7d8c9b4-abcde
gh run view 9123456789 --log
ulid 01HXYZ5J8K9M2N3P4Q5R6S7T8V
nanoid V1StGXR8_Z5jdHi6B-myT
YouTube video dQw4w9WgXcQ
k8s secret name: tls-api-gateway-2024
payment_intent pi_3{a23} succeeded
Sentry event {h32} in project acme-web
@@ CJK prose about a secret, no value
密码已重置，请查收邮件。
令牌数量上限为 4096。
パスワードを忘れた場合はリセットしてください。
密钥存放在 Vault 里。
비밀번호는 8자 이상이어야 합니다.
密码是必填项。
トークンは24時間で失効します。
""".strip()


# ---------------------------------------------------------------- context families
# Added with the rules for command lines, config files, connection strings, Terraform,
# Markdown tables and prose forms (memcli/secrets/rules.py), drawn from a second seeded
# generator after everything above so that the earlier records stay as they were. Besides {s}
# and {id}: {sh} a password a shell takes unquoted (letters and digits), {tok} an opaque token,
# {keydata} a base64 PEM private key (kubeconfig client-key-data), {phrase} a passphrase with
# spaces, {w} a plain-word password. The negatives are the near misses of the same families.
FAMILY_SEED = SEED + 1
FAMILY_POSITIVES = r"""
@@ password
docker login -u ci -p {sh} registry.acme.dev
$ podman login quay.io -u deploy -p '{s}'
docker login \\n  --username deploy \\n  -p {sh} \\n  registry.acme.dev
make build && docker login -u gitlab-ci -p "{s}" registry.gitlab.com
mysql -h db.internal -u root -p{sh} app
mysqldump -uroot -p'{s}' --all-databases > all.sql
- ran `redis-cli -a {sh} FLUSHALL` on staging by mistake
redis-cli -h cache.internal -p 6379 -a '{s}' --no-auth-warning info
sshpass -p '{s}' ssh deploy@10.0.0.5 'sudo systemctl restart app'
PGPASSWORD={sh} psql -h db.internal -U app app
curl --user ci-bot:{sh} https://nexus.acme.dev/service/rest/v1/status
htpasswd -bc /etc/nginx/.htpasswd admin {sh}
sqlcmd -S db.internal -U sa -P '{s}' -Q "SELECT @@VERSION"
ldapsearch -x -H ldap://ldap.acme.dev -D "cn=admin,dc=acme,dc=dev" -w {sh} -b "dc=acme,dc=dev"
mongosh "mongodb://db.internal:27017/app" -u app -p '{s}'
plink -ssh root@10.0.0.9 -pw {sh} uptime
smbclient //nas/backup -U backup%{sh}
keytool -importkeystore -srckeystore old.jks -srcstorepass {sh} -destkeystore new.p12
I ran mysql -u admin -p{sh} and it worked
machine api.heroku.com\n  login ana@example.com\n  password {s}
machine nexus.acme.dev login deploy password {s}
//npm.acme.dev/:_authToken={tok}
[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = deploy\npassword = {s}
apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: {tok}
users:\n- name: kind-admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n    client-key-data: {keydata}
variable "db_password" {\n  description = "RDS master password"\n  type        = string\n  default     = "{s}"\n  sensitive   = true\n}
variable "api_token" { default = "{tok}" }
FROM postgres:16\nENV POSTGRES_PASSWORD {sh}
Data Source=db.internal;Initial Catalog=app;User Id=sa;Password={phrase};
Driver={ODBC Driver 18 for SQL Server};Server=db;UID=app;PWD={{s}};
"ConnectionStrings": {"Default": "Server=db;Database=app;User Id=app;Password={s}"}
| env | user | password |\n|---|---|---|\n| staging | admin | {s} |
| Key | Value |\n|---|---|\n| DB_HOST | db.internal |\n| DB_PASSWORD | {s} |
| Service | Token |\n|:--|:--|\n| grafana | {tok} |
heads up: the staging token was rotated, the new one is {tok}
the root password was reset to {sh} this morning
try the admin password {s} if SSO is down
log in with password {sh}
the root password `{s}` works on all three boxes
Credentials for the NAS: admin / {sh}
login: ana@acme.dev / {sh}
smtp.login("alerts@acme.dev", "{s}")
session.auth = ("ci", "{s}")
requests.post(url, auth=HTTPBasicAuth("deploy", "{s}"))
new NetworkCredential("svc_backup", "{s}")
the guest wifi password is {w}.
our router password was {w}
@@ basic_auth
//npm.acme.dev/:_auth={s}\nalways-auth=true
{"auths": {"registry.acme.dev": {"auth": "{s}"}}, "credsStore": ""}
_auth = "{s}"
""".strip()

FAMILY_NEGATIVES = r"""
@@ command line without a password value
docker login -u ci --password-stdin registry.acme.dev < ~/.ci-token
echo "$CI_TOKEN" | docker login -u ci --password-stdin ghcr.io
docker login -u AWS -p $(aws ecr get-login-password) 123456789012.dkr.ecr.eu-west-1.amazonaws.com
docker login -p is deprecated; use --password-stdin instead.
Run `docker login -p` only in throwaway CI jobs.
docker run -d -p 8080:80 -p 443:443 nginx:1.27
docker login ghcr.io && docker run -p 5432:5432 postgres:16
ssh -p 2222 deploy@bastion.acme.dev
mkdir -p /var/lib/app/data && cp -p config.yml /etc/app/
mysql -h db.internal -P 3306 -u root -p app_production
mysql -u root -p
mysqldump -u backup -p --single-transaction app > app.sql
redis-cli -a <password> ping
redis-cli -h cache -a "$REDIS_PASSWORD" --no-auth-warning info
sshpass -f ~/.ssh/pw.txt ssh deploy@10.0.0.5
htpasswd -c /etc/nginx/.htpasswd admin
htpasswd -bc /etc/nginx/.htpasswd admin <password>
curl -u admin: https://ci.acme.dev/api/json
docker run --rm -u 1000:1000 -v "$PWD":/app node:20 npm ci
docker exec -u www-data:www-data app php artisan migrate
ldapsearch -x -W -D "cn=admin,dc=acme,dc=dev" -b dc=acme,dc=dev
mongosh "mongodb://db.internal:27017" -u admin -p --authenticationDatabase admin
sqlcmd -S db -U sa -P $SA_PASSWORD -Q "SELECT 1"
Use mysql -p to be prompted for the password.
The -p flag of docker login puts the password in your shell history.
zip -r -e backup.zip data/
@@ config file without a secret
machine github.com login ci password $GITHUB_TOKEN
machine api.heroku.com\n  login ana@example.com\n  password <token from heroku auth:token>
The machine learning login flow sends a password reset email.
always-auth=true\nregistry=https://npm.acme.dev/
//npm.pkg.github.com/:_authToken=${NPM_TOKEN}
{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}
{"auth": {"type": "oauth2", "flow": "pkce"}}
[pypi]\nusername = __token__\npassword = <your PyPI token>
[default]\nregion = eu-west-1\noutput = json
users:\n- name: ci\n  user:\n    exec:\n      command: aws\n      args: ["eks", "get-token", "--cluster-name", "prod"]
users:\n- name: ci\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t{b64}
variable "db_password" {\n  type      = string\n  sensitive = true\n}
variable "password_length" {\n  default = "24"\n}
variable "region" {\n  default = "eu-west-1"\n}
variable "api_token" {\n  default = "changeme"\n}
ENV PASSWORD_FILE /run/secrets/db
ARG NPM_TOKEN
@@ connection string without a secret
Server=db.internal;Database=app;Integrated Security=SSPI;TrustServerCertificate=True;
Server=db;Database=app;User Id=sa;Password=;
Server=db;Database=app;User Id=sa;Password=${SA_PASSWORD};
"ConnectionStrings": {"Default": "Server=db;Database=app;User Id=app;Password={{ db_password }};"}
Data Source=app.db;Cache=Shared
cd ~/projects/mem && pwd
@@ Markdown table without a secret
| Setting | Password |\n|---|---|\n| staging | see 1Password |
| Field | Type | Description |\n|---|---|---|\n| password | string | The user's password |\n| token | string | A session token |
| name | token |\n|---|---|\n| prod | rotated |
| model | tokens |\n|---|---|\n| gpt-4o | 128000 |
| user | password |\n|---|---|\n| admin | ******** |
| Key | Value |\n|---|---|\n| DB_PASSWORD | ${DB_PASSWORD} |\n| DB_HOST | db.internal |
| Option | Description |\n|---|---|\n| --password | Password to connect with |\n| --token-file | Path to a token file |
| Secret | Rotation |\n|---|---|\n| db-password | 90 days |
| Token | Logprob |\n|---|---|\n| Hello | -0.31 |\n| world | -1.20 |
@@ prose about a password, new forms
The password policy changed, it is now 14 characters minimum.
The token limit is now 8192.
The API token was rotated to a new secret manager.
Password reset: open the link in the email.
Use token-based auth for the API.
Use the API key from 1Password, not the old one.
the password is incorrect.
the password is expired
The wifi password is printed on the router.
the password is different.
Credentials: see the vault.
Account: acme/production
credentials: vault/kv/app/db
auth=(user, password)
requests.get(url, auth=("user", "<password>"))
HTTPBasicAuth("admin", "changeme")
the password `--stdin` flag reads it from a pipe
Rotate the password `db-prod` in Vault.
Set the password with `mem config set password`.
Pass `--json` to get machine-readable output.
""".strip()
FAMILY_WORDS = ("lighthouse", "marigold", "avalanche", "pineapple", "snowdrop")
PHRASE_WORDS = ("correct", "horse", "battery", "staple", "orbit", "velvet", "canyon", "maple")


# ---------------------------------------------------------------- corpus generation


def blocks(text: str):
    """(heading, line) for every template line under a `@@ heading`."""
    heading = ""
    for line in text.splitlines():
        if line.startswith("@@ "):
            heading = line[3:].strip()
        elif line.strip():
            yield heading, line.replace("\\n", "\n")


def pem_forms(fake: Fake) -> dict[str, str]:
    """The PEM placeholders of the private_key templates: whole, JSON-escaped, indented, quoted, cut."""
    pem = fake.pem()
    lines = pem.splitlines()
    cut = "\n".join(lines[: max(3, len(lines) // 2)])
    return {
        "{s}": pem,
        "{json_pem}": pem.replace("\n", "\\n") + "\\n",
        "{indented_pem}": "\n".join("  " + x for x in lines),
        "{quoted_pem}": "\n> ".join(lines),
        "{truncated_pem}": cut + "\n[... truncated]",
    }


def positive(fake: Fake, kind: str, template: str) -> dict:
    makers = {
        "aws_secret_key": fake.aws_secret_key,
        "bearer_token": fake.opaque_token,
        "password": fake.password,
        "basic_auth": lambda: base64.b64encode(f"svc-{fake.s(LO, 5)}:{fake.password()}".encode()).decode(),
        "url_password": fake.password,
        "gitlab_token": lambda: "glpat-" + fake.s(URLSAFE, 20),
        "npm_token": lambda: "npm_" + fake.s(ALNUM, 36),
        "huggingface_token": lambda: "hf_" + fake.s(ALNUM, 34),
        "sendgrid_key": lambda: f"SG.{fake.s(URLSAFE, 22)}.{fake.s(URLSAFE, 43)}",
    }
    if kind == "private_key":
        forms = pem_forms(fake)
        text = template
        for key, value in forms.items():
            text = text.replace(key, value)
        lines = forms["{s}"].splitlines()
        secrets = [lines[1]] if "{truncated_pem}" in template else [lines[1], lines[-2]]
        return {"text": text, "secrets": secrets, "kind": kind}
    if kind == "slack_webhook":
        url, token = fake.slack_webhook()
        return {"text": template.replace("{url}", url), "secrets": [token], "kind": kind}
    if kind == "url_password":  # URL passwords avoid @ / : which would end the field
        secret = fake.s(ALNUM, 1) + fake.password().replace("@", "x").replace("/", "y").replace(":", "z")
    else:
        secret = makers.get(kind, getattr(fake, kind, None))()
    secrets = [secret]
    text = template.replace("{s}", secret)
    if "{id}" in template:
        key_id = fake.aws_access_key_id()
        text, secrets = text.replace("{id}", key_id), [key_id, secret]
    return {"text": text, "secrets": secrets, "kind": kind}


def build_positives(fake: Fake) -> list[dict]:
    out = [positive(fake, kind, template) for kind, template in blocks(POSITIVES)]
    for word, template in zip(WORD_PASSWORDS, WORD_PASSWORD_TEMPLATES):
        out.append({"text": template.replace("{s}", word), "secrets": [word], "kind": "password"})
    return out


def fill(fake: Fake, template: str) -> str:
    import re

    alphabets = {"h": HEX, "H": HEX.upper(), "b": B64, "a": ALNUM}
    text = template.replace("{uuid}", "\0uuid\0")
    text = re.sub(r"\{([hHba])(\d+)\}", lambda m: fake.s(alphabets[m[1]], int(m[2])), text)
    while "\0uuid\0" in text:
        text = text.replace("\0uuid\0", fake.uuid(), 1)
    return text


def build_negatives(fake: Fake) -> list[dict]:
    return [{"text": fill(fake, template), "why": why} for why, template in blocks(NEGATIVES)]


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def family_positive(fake: Fake, kind: str, template: str) -> dict:
    """A context-family record: {sh}, {tok}, {keydata}, {phrase} and {w} first, else as positive()."""
    makers = {
        "{sh}": lambda: fake.s(ALNUM, fake.rng.randrange(12, 20)),
        "{tok}": fake.opaque_token,
        "{keydata}": lambda: base64.b64encode((fake.pem() + "\n").encode()).decode(),
        "{phrase}": lambda: " ".join(fake.pick(*PHRASE_WORDS) for _ in range(4)),
        "{w}": lambda: fake.pick(*FAMILY_WORDS),
    }
    for placeholder, make in makers.items():
        if placeholder in template:
            secret = make()
            return {"text": template.replace(placeholder, secret), "secrets": [secret], "kind": kind}
    return positive(fake, kind, template)


def build_families(fake: Fake) -> tuple[list[dict], list[dict]]:
    positives = [family_positive(fake, kind, template) for kind, template in blocks(FAMILY_POSITIVES)]
    return positives, [{"text": fill(fake, template), "why": why} for why, template in blocks(FAMILY_NEGATIVES)]


def regenerate(corpus: Path) -> dict:
    fake = Fake(SEED)
    positives, negatives = build_positives(fake), build_negatives(fake)
    more_positives, more_negatives = build_families(Fake(FAMILY_SEED))
    positives, negatives = positives + more_positives, negatives + more_negatives
    for r in positives:
        missing = [s for s in r["secrets"] if s not in r["text"]]
        assert not missing, (r, missing)
    write_jsonl(corpus / "positives.jsonl", positives)
    write_jsonl(corpus / "negatives.jsonl", negatives)
    return {"positives": len(positives), "negatives": len(negatives), "corpus": str(corpus)}


# ---------------------------------------------------------------- scoring


def load_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def spans_of(text: str, needle: str) -> list[tuple[int, int]]:
    out, at = [], text.find(needle)
    while at >= 0:
        out.append((at, at + len(needle)))
        at = text.find(needle, at + 1)
    return out


def score_positive(redactor, record: dict, tally: dict) -> None:
    text, secrets = record["text"], record["secrets"]
    found = redactor.find(text)
    out, _ = redactor.redact(text)
    targets = [span for s in secrets for span in spans_of(text, s)]
    kind = tally["by_kind"].setdefault(record["kind"], {"secrets": 0, "recalled": 0})
    missed = [s for s in secrets if s in out or MARKER not in out]
    kind["secrets"] += len(secrets)
    kind["recalled"] += len(secrets) - len(missed)
    tally["secrets"] += len(secrets)
    tally["recalled"] += len(secrets) - len(missed)
    if missed:
        tally["fn_cases"].append({"kind": record["kind"], "text": text, "missed": missed})
    for f in found:
        hit = any(f.start < end and start < f.end for start, end in targets)
        tally["tp" if hit else "fp"] += 1
        tally["kind_match"] += hit and f.kind == record["kind"]
        if not hit:
            tally["fp_cases"].append({"kind": f.kind, "match": text[f.start : f.end], "text": text})
    tally["records"].append({"text": text, "found": [[f.kind, text[f.start : f.end]] for f in found]})


def score_negative(redactor, record: dict, tally: dict) -> None:
    text = record["text"]
    found = redactor.find(text)
    tally["fp"] += len(found)
    for f in found:
        tally["fp_cases"].append(
            {"kind": f.kind, "match": text[f.start : f.end], "why": record.get("why"), "text": text}
        )
    tally["records"].append({"text": text, "found": [[f.kind, text[f.start : f.end]] for f in found]})


def score(redactor, positives: list[dict], negatives: list[dict]) -> dict:
    """Precision over replacements, recall over listed secrets (see the module docstring)."""
    tally = {
        "secrets": 0,
        "recalled": 0,
        "tp": 0,
        "fp": 0,
        "kind_match": 0,
        "by_kind": {},
        "fn_cases": [],
        "fp_cases": [],
        "records": [],
    }
    for r in positives:
        score_positive(redactor, r, tally)
    for r in negatives:
        score_negative(redactor, r, tally)
    replacements = tally["tp"] + tally["fp"]
    return {
        "precision": round(tally["tp"] / replacements, 4) if replacements else 1.0,
        "recall": round(tally["recalled"] / tally["secrets"], 4) if tally["secrets"] else 1.0,
        "positives": len(positives),
        "negatives": len(negatives),
        "secrets": tally["secrets"],
        "replacements": replacements,
        "true_positives": tally["tp"],
        "false_positives": tally["fp"],
        "false_negatives": tally["secrets"] - tally["recalled"],
        "kind_agreement": round(tally["kind_match"] / tally["tp"], 4) if tally["tp"] else None,
        "by_kind": {
            k: {**v, "recall": round(v["recalled"] / v["secrets"], 4)} for k, v in sorted(tally["by_kind"].items())
        },
        "false_positive_cases": tally["fp_cases"],
        "false_negative_cases": tally["fn_cases"],
        "records": tally["records"],
    }


def ms_per_mib(redactor, text: str) -> float:
    """Redaction time of one MiB of `text` (repeated), best of three."""
    blob = (text * (1 + (1 << 20) // max(1, len(text))))[: 1 << 20]
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        redactor.redact(blob)
        best = min(best, time.perf_counter() - t0)
    return round(best * 1000, 1)


def timing(redactor, corpus_texts: list[str]) -> dict:
    """Notes-like prose (the repo's own Markdown: a few secrets words, no secrets) and the
    corpus itself (a secret every ~200 bytes: far denser than any real note)."""
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    notes = "\n\n".join(p.read_text(encoding="utf-8") for p in docs if p.is_file())
    return {
        "ms_per_mib_notes": ms_per_mib(redactor, notes or "\n".join(corpus_texts)),
        "ms_per_mib_corpus": ms_per_mib(redactor, "\n\n".join(corpus_texts)),
    }


def load_redact():
    if sys.path and Path(sys.path[0]).resolve() == HERE:
        sys.path.pop(0)  # bench/ first on the path would shadow the stdlib `secrets` module
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    return importlib.import_module("memcli.secrets.redact")


def report(corpus: Path, details: bool) -> dict:
    redactor = load_redact().Redactor.from_config()
    t0 = time.perf_counter()
    positives, negatives = load_jsonl(corpus / "positives.jsonl"), load_jsonl(corpus / "negatives.jsonl")
    doc = score(redactor, positives, negatives)
    # the other sets, each scored on its own: sentences.jsonl (the dev set of secrets as people
    # write them, tuned on), then every heldout*.jsonl by name, never tuned on (heldout.jsonl written
    # after the first rules, heldout2.jsonl by someone who never saw the rules or the corpus)
    parts = [doc]
    for path in [corpus / "sentences.jsonl", *sorted(corpus.glob("heldout*.jsonl"))]:
        if path.is_file():
            records = load_jsonl(path)
            doc[path.stem] = score(
                redactor, [r for r in records if "secrets" in r], [r for r in records if "secrets" not in r]
            )
            parts.append(doc[path.stem])
    doc["seconds"] = round(time.perf_counter() - t0, 3)
    for part in parts:
        if not details:
            part.pop("records")
    doc["timing"] = timing(redactor, [r["text"] for r in positives + negatives])
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="folder of the .jsonl files")
    ap.add_argument("--details", action="store_true", help="every replacement of every record")
    ap.add_argument("--regenerate", action="store_true", help="rewrite positives.jsonl and negatives.jsonl")
    args = ap.parse_args(argv)
    doc = regenerate(args.corpus) if args.regenerate else report(args.corpus, args.details)
    json.dump(doc, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
