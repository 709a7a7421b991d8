"""The owner of what is secret (beyond/secrets/): which names are secret, which places of an entry, and the
masking by value and by place, whole and streamed, each on an Inventory of the test's own."""
import pytest

from beyond.secrets import (Inventory, MaskedStream, add, is_secret_name, learn_entry, mask, masked_entry, places)

SECRET_NAMES = ("OPENAI_API_KEY", "GITHUB_PERSONAL_ACCESS_TOKEN", "client_secret", "DB_PASSWORD", "MYSQL_PASSWD",
                "GPG_PASSPHRASE", "AWS_CREDENTIALS", "session_cookie", "X-Auth", "sig")
PLAIN_NAMES = ("API_KEY_FILE", "key-file", "TOKEN_PATH", "OAUTH_CLIENT_ID", "AUTHOR", "SIGNAL", "PATH")


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_name_that_says_secret_is_one(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_a_name_of_a_path_a_name_or_another_word_is_none(name):
    assert not is_secret_name(name)


def test_an_entrys_secret_places():
    """env and headers under secret names (the scheme word off), args after a secret flag or glued to it, and
    every URL's password and secret-named query values; a ${VAR} stands as written."""
    entry = {"command": "srv", "args": ["--api-key", "sk-1", "--token=abc", "--key-file", "/k", "--port", "80",
                                        "https://u:pw@h/?token=t&x=1"],
             "env": {"GH_TOKEN": "g", "DB": "postgres://a:b@h/d", "HOME_DIR": "/x"},
             "headers": {"Authorization": "Bearer ${T}", "X-Tenant": "acme"}, "url": "https://h/mcp?api_key=k"}
    assert [(place.where, place.value) for place in places(entry)] == [
        ("env GH_TOKEN", "g"), ("env DB (the URL's password)", "b"), ("header Authorization", "${T}"),
        ("args[1] (after --api-key)", "sk-1"), ("args[2] (after --token)", "abc"),
        ("args[7] (the URL's password)", "pw"), ("args[7] (the URL's token)", "t"), ("url (the URL's api_key)", "k")]
    shown = masked_entry(entry, keep=lambda value: value.startswith("${"))
    assert shown["args"][:7] == ["--api-key", "[masked]", "--token=[masked]", "--key-file", "/k", "--port", "80"]
    assert shown["args"][7] == "https://u:[masked]@h/?token=[masked]&x=1"
    assert shown["url"] == "https://h/mcp?api_key=[masked]"
    assert shown["env"] == {"GH_TOKEN": "[masked]", "DB": "postgres://a:[masked]@h/d", "HOME_DIR": "/x"}
    assert shown["headers"] == {"Authorization": "Bearer ${T}", "X-Tenant": "acme"}


def test_by_value_a_long_secret_anywhere_a_short_one_as_a_token_a_shorter_one_never():
    """12 characters or more: glued to letters too; 8 to 11: as a whole token only; under 8: never by value.
    A placeholder key of a local endpoint masks nothing."""
    inventory = Inventory({"GH_TOKEN": "ghp_0123456789abcdef", "MY_TOKEN": "tok-1234567", "PIN_TOKEN": "1234567",
                           "OPENAI_API_KEY": "ollama", "PATH": "/usr/bin/secretive-but-no-secret"})
    text = "yyghp_0123456789abcdefzz; tok-1234567; xtok-1234567y; pin 1234567; model ollama; /usr/bin/secretive"
    assert inventory.mask(text) == ("yy[REDACTED:GH_TOKEN]zz; [REDACTED:MY_TOKEN]; xtok-1234567y; pin 1234567; "
                                    "model ollama; /usr/bin/secretive")


def test_a_url_in_the_environment_brings_its_password():
    """A proxy's or a database's URL: its password is masked bare too, wherever a server repeats it."""
    inventory = Inventory({"HTTPS_PROXY": "http://u:proxy-pass-01@proxy:3128", "DATABASE_URL": "postgres://app:"
                           "db-pass-0123@db/x?sslmode=require", "HOME": "/root", "ODD": "http://[::1 no URL"})
    assert inventory.mask("proxy-pass-01 and xdb-pass-0123y") == "[REDACTED:HTTPS_PROXY] and x[REDACTED:DATABASE_URL]y"


def test_by_value_as_json_and_a_url_write_it():
    inventory = Inventory({})
    inventory.add('pa"ss/word-1234', "DB_PASSWORD")
    assert inventory.mask('{"text": "pa\\"ss/word-1234"} https://h/?p=pa%22ss%2Fword-1234') == \
        '{"text": "[REDACTED:DB_PASSWORD]"} https://h/?p=[REDACTED:DB_PASSWORD]'


@pytest.mark.parametrize("text, masked", [
    ("--api-key sk-1 --token=x --no-auth --port 8", "--api-key [REDACTED] --token=[REDACTED] --no-auth --port 8"),
    ("export API_KEY=abc PATH=/bin", "export API_KEY=[REDACTED] PATH=/bin"),
    ("GET /x?api_key=abc&page=2", "GET /x?api_key=[REDACTED]&page=2"),
    ('{"password": "hunter2", "name": "n", "max_tokens": 5}',
     '{"password": "[REDACTED]", "name": "n", "max_tokens": 5}'),
    ('{\\"secret\\": \\"s3\\"}', '{\\"secret\\": \\"[REDACTED]\\"}'),
    ("Authorization: Bearer a.b-c and Basic dXNlcjpwYXNz, but Basic usage", "Authorization: Bearer [REDACTED] and "
     "Basic [REDACTED], but Basic usage"),
    ("proxy http://u:p@proxy:3128 up", "proxy http://u:[REDACTED]@proxy:3128 up"),
    ("TOKEN=${TOKEN} KEY=[REDACTED:X] API_KEY=ollama auth=true author=me", "TOKEN=${TOKEN} KEY=[REDACTED:X] "
     "API_KEY=ollama auth=true author=me"),
])
def test_by_place_at_any_length(text, masked):
    assert Inventory({}).mask(text) == masked


def test_the_process_inventory_only_grows_and_learns_a_starting_servers_secrets():
    """What a server is started with: each literal at a secret place and what a ${VAR} brought into its env
    or headers (a path aside); nothing takes a secret out."""
    written = {"args": ["--api-key", "literal-key-0001", "--root", "${ROOT}"], "env": {"PLAIN": "${MINE}", "WHERE":
               "${HOME}/x"}, "headers": {"X-Custom": "${CUSTOM}"}}
    expanded = {"args": ["--api-key", "literal-key-0001", "--root", "/home/u/proj"],
                "env": {"PLAIN": "from-env-value-1", "WHERE": "/home/u/x"}, "headers": {"X-Custom": "custom-header-1"}}
    learn_entry(written, expanded)
    assert mask("literal-key-0001 from-env-value-1 custom-header-1 /home/u/x /home/u/proj") == \
        "[REDACTED:api-key] [REDACTED:PLAIN] [REDACTED:X-Custom] /home/u/x /home/u/proj"
    add("literal-key-0001", "another")
    assert mask("literal-key-0001") == "[REDACTED:api-key]"
    assert not hasattr(Inventory, "remove") and not hasattr(Inventory, "clear")


def test_rotating_secrets_keep_the_newest_of_each_kind_and_the_rest():
    inventory = Inventory({})
    inventory.add("a-client-secret-1", "client_secret")
    for n in range(100):
        inventory.add(f"access-token-{n:04}", "access_token", rotating="server A")
    inventory.add("access-token-of-b", "access_token", rotating="server B")
    kept = inventory.values()
    assert "a-client-secret-1" in kept and "access-token-of-b" in kept and "access-token-0099" in kept
    assert "access-token-0000" not in kept and len(kept) == 2 + 16


@pytest.mark.parametrize("pieces", [
    ["the key is ghp_01234", "56789abcdef", " ok\n"],
    ["the key is g", "hp_0123456789abcdef ok\n"],
    ["run it with --tok", "en hunt", "er2 now\n"],
    ['{"pass', 'word": "hu', 'nter2"}\n'],
])
def test_a_stream_split_anywhere_shows_no_secret(pieces):
    stream = MaskedStream(Inventory({"GH_TOKEN": "ghp_0123456789abcdef"}))
    shown = "".join(stream.feed(piece) for piece in pieces) + stream.rest()
    assert shown == Inventory({"GH_TOKEN": "ghp_0123456789abcdef"}).mask("".join(pieces))
    assert "ghp_0" not in shown and "hunter2" not in shown


def test_a_stream_shows_plain_text_as_it_comes():
    """Only the last word waits (it may still grow into a secret); a line with nothing secret-looking flows."""
    stream = MaskedStream(Inventory({}))
    assert stream.feed("Hello there, ") == "Hello there, "
    assert stream.feed("how are yo") == "how are "
    assert stream.feed("u?\n") == "you?\n"
