"""Beyond the tutorial: what is secret by its name: is_secret_name() for variables, keys, headers,
query parameters and flags alike (a word of the name that is or ends in KEY, TOKEN, SECRET, PASSWORD, PASSWD,
PASSPHRASE, CREDENTIAL, COOKIE, SESSION or AUTHORIZATION, or is AUTH, SIG, PAT, PASS or PWD; not a name of a
path or an address, nor one whose last word says it is none (secret_id, token_type), nor a sort's key or a
page's token); the names of files that usually hold secrets (looks_secret()).
"""
import fnmatch
import functools
import re

# A name is secret when one of its words is, or ends in, one of these (api_key, apiKey, APIKEY, ghToken,
# API_KEY2, API_KEYS)...
SECRET_ENDINGS = ("KEY", "KEYS", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE",
                  "CREDENTIAL", "CREDENTIALS", "COOKIE", "SESSION", "AUTHORIZATION")
# ...or is one of these, which end too many other words (oauth, design, path, compass).
SECRET_WORDS = ("AUTH", "SIG", "PAT", "PASS", "PWD")
# A name ending so holds a path, an address or another name: where a secret is, not the secret.
NOT_SECRET_ENDINGS = ("_FILE", "_PATH", "_DIR", "_ENV", "_VAR", "-FILE", "-PATH", "_URL", "_URI", "_ENDPOINT",
                      "_SOCK", "_ADDRESS")
# A last word that says what the value is, when it is no credential: secret_id, key_name, token_type,
# token_count, session_timeout, sig_algo.
NOT_SECRET_LAST = {"ID", "IDS", "NAME", "NAMES", "TYPE", "TYPES", "KIND", "COUNT", "LIMIT", "LENGTH", "LEN", "SIZE",
                   "TTL", "TIMEOUT", "EXPIRY", "EXPIRES", "LIFETIME", "ALGO", "ALGORITHM", "FORMAT", "PREFIX",
                   "SUFFIX", "MODE", "VERSION", "REGION", "HEADER", "PARAM", "FIELD", "METHOD", "SCOPE", "SCOPES",
                   "HINT", "ENABLED", "REQUIRED", "USED", "STORE", "PROVIDER", "ISSUER", "AUDIENCE", "POLICY"}
# Words that make a key or token something else: an index's, a cache's, a page's, a count of the model's.
NOT_SECRET_BEFORE = {"SORT", "CACHE", "FOREIGN", "PRIMARY", "PARTITION", "HASH", "RANGE", "IDEMPOTENCY", "LOOKUP",
                     "GROUP", "ROUTING", "SHARD", "COMPOSITE", "UNIQUE", "INDEX", "DEDUP", "PAGE", "NEXT", "MAX",
                     "MIN", "NUM", "INPUT", "OUTPUT", "PROMPT", "COMPLETION", "TOTAL", "REASONING", "CACHED", "HOT"}
NOT_SECRET_NAMES = ("PWD", "OLDPWD")  # the shell's folders
# The words of a name: api_key, X-Auth, basicAuth; a number at a word's end is no part of it (API_KEY2).
WORDS = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
DIGITS = re.compile(r"[0-9]+$")
# Headers that carry a credential whatever their name says, and the schemes written before one.
CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "cookie", "x-api-key")
AUTH_SCHEME = re.compile(r"^\s*(?:Bearer|Basic|Token|DPoP)\s+", re.IGNORECASE)
# What local endpoints take as a key (Ollama, LM Studio, vLLM), what examples write, and the defaults a local
# database's image takes: words, not secrets (masked, they would hide `postgres` in every command).
PLACEHOLDERS = {"none", "null", "empty", "test", "dummy", "fake", "placeholder", "changeme", "ollama", "lm-studio",
                "lmstudio", "no-key", "nokey", "not-needed", "sk-no-key-required", "sk-xxx", "sk-test", "sk-dummy",
                "sk-1234", "sk-placeholder", "password", "postgres", "secret", "example", "redacted"}
# Files that usually hold secrets: by name, by the folder they are in, and by their last two parts.
SECRET_FILES = (".env*", "*.pem", "*.key", "*.ppk", "*.p12", "*.pfx", "id_rsa*", "id_ed25519*", "id_ecdsa*",
                "id_dsa*", ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass", "credentials.json",
                "*_history")
SECRET_FOLDERS = (".ssh", ".aws", ".kube", ".gnupg")
SECRET_PATHS = (".docker/config.json", ".git/config")
# Each as one pattern: a name matched, a path searched (a folder anywhere in it, or its last two parts).
SECRET_FILE = re.compile("|".join(fnmatch.translate(pattern) for pattern in SECRET_FILES))
SECRET_PLACE = re.compile(rf"(?:^|/)(?:{'|'.join(map(re.escape, SECRET_FOLDERS))})/"
                          rf"|(?:^|/)(?:{'|'.join(map(re.escape, SECRET_PATHS))})$")


@functools.lru_cache(maxsize=4096)  # names repeat: every variable, every key of every result
def is_secret_name(name: str) -> bool:
    """Whether a variable, key, header, query parameter or flag (without its dashes) names a secret."""
    upper = name.upper()
    words = [DIGITS.sub("", word.upper()) for word in WORDS.split(name) if word]
    words = [word for word in words if word]
    if not words or upper.endswith(NOT_SECRET_ENDINGS) or upper in NOT_SECRET_NAMES or words[-1] in NOT_SECRET_LAST:
        return False
    return any((word.endswith(SECRET_ENDINGS) or word in SECRET_WORDS)
               and not (i and words[i - 1] in NOT_SECRET_BEFORE) for i, word in enumerate(words))


def looks_secret(path: str) -> bool:
    """True for a path whose file name matches SECRET_FILES, that lies under a SECRET_FOLDERS folder,
    or that ends in one of SECRET_PATHS."""
    path = path.replace("\\", "/")
    return SECRET_FILE.match(path.rpartition("/")[2]) is not None or SECRET_PLACE.search(path) is not None
