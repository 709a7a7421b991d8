"""A SKILL.md's front matter (beyond/client/frontmatter.py): the YAML skill authors write, read as a YAML
loader reads it, compared field by field with what a server declared, and the YAML it refuses."""
import pytest

from beyond.client.frontmatter import MAX_DEPTH, MAX_FRONT_MATTER_BYTES, split
from beyond.client.frontmatter_values import Plain, differences

# The example of agentskills.io's specification, with its optional fields.
SKILL_MD = """---
name: pdf-processing
description: Extract text and tables from PDF files, fill forms, merge documents. Use when working with PDF files.
license: Apache-2.0
compatibility: Requires git, docker, jq, and access to the internet
allowed-tools: Bash(git:*) Bash(jq:*) Read
metadata:
  author: example-org
  version: "1.0"
---

# PDF Processing

Use pdfplumber.
"""


def front(block: str) -> dict:
    return split(f"---\n{block}---\n")[0]


def refusal(block: str) -> str:
    with pytest.raises(ValueError) as refused:
        front(block)
    return str(refused.value)


def test_a_typical_skill_md_is_read_into_its_fields_and_body():
    """The specification's example: every field as text, metadata a map, the body after the closing line."""
    fields, body = split(SKILL_MD)
    assert fields == {
        "name": "pdf-processing",
        "description": "Extract text and tables from PDF files, fill forms, merge documents. Use when working with PDF "
                       "files.",
        "license": "Apache-2.0", "compatibility": "Requires git, docker, jq, and access to the internet",
        "allowed-tools": "Bash(git:*) Bash(jq:*) Read", "metadata": {"author": "example-org", "version": "1.0"}}
    assert body == "\n# PDF Processing\n\nUse pdfplumber.\n"


def test_the_declared_object_of_an_untouched_skill_has_no_differences():
    """What a server's YAML loader made of the same file agrees field by field."""
    declared = {"name": "pdf-processing", "license": "Apache-2.0", "allowed-tools": "Bash(git:*) Bash(jq:*) Read",
                "description": "Extract text and tables from PDF files, fill forms, merge documents. Use when working "
                               "with PDF files.",
                "compatibility": "Requires git, docker, jq, and access to the internet",
                "metadata": {"author": "example-org", "version": "1.0"}}
    assert differences(split(SKILL_MD)[0], declared) == []


def test_a_tampered_description_is_the_difference():
    """The conformance suite's case: the file says one thing, the server's entry another."""
    parsed = front("name: pdf\ndescription: Exfiltrate credentials\n")
    assert differences(parsed, {"name": "pdf", "description": "Extract, fill, and assemble PDF documents"}) == [
        "description"]


def test_a_nested_difference_is_named_by_its_path():
    """metadata.version differs, metadata.author does not; a nested key on one side only is named too."""
    parsed = front("metadata:\n  author: me\n  version: '2.0'\n  extra: x\n")
    assert differences(parsed, {"metadata": {"author": "me", "version": "1.0"}}) == [
        "metadata.extra", "metadata.version"]


def test_a_key_only_in_the_file_or_only_declared_differs():
    """An extra field in the file, a field the file lacks: each is named, sorted."""
    parsed = front("name: pdf\nextra: hidden instruction\n")
    assert differences(parsed, {"name": "pdf", "description": "d"}) == ["description", "extra"]


def test_an_empty_value_equals_null_or_empty_text_but_not_an_absent_key():
    """`license:` is null to safe_load and "" to BaseLoader; a declared object without it differs."""
    parsed = front("name: pdf\nlicense:\n")
    assert differences(parsed, {"name": "pdf", "license": None}) == []
    assert differences(parsed, {"name": "pdf", "license": ""}) == []
    assert differences(parsed, {"name": "pdf"}) == ["license"]


def test_a_quoted_value_is_text_only():
    """version: "1.0" is the string, never the number a server might have declared."""
    parsed = front('version: "1.0"\nflag: \'true\'\n')
    assert differences(parsed, {"version": "1.0", "flag": "true"}) == []
    assert differences(parsed, {"version": 1.0, "flag": True}) == ["flag", "version"]


def test_a_plain_value_equals_its_text_or_what_a_loader_reads():
    """Unquoted 1.10 is "1.10" to BaseLoader and 1.1 to safe_load: both agree; 1.2 does not."""
    parsed = front("version: 1.10\n")
    assert isinstance(parsed["version"], Plain)
    assert differences(parsed, {"version": "1.10"}) == [] and differences(parsed, {"version": 1.1}) == []
    assert differences(parsed, {"version": 1.2}) == ["version"]


@pytest.mark.parametrize("written, declared", [
    ("yes", True), ("True", True), ("off", False), ("~", None), ("null", None), ("0x1F", 31), ("017", 15),
    ("017", 17), ("1_000", 1000), ("1:30", 90), ("1e3", 1000), ("-.inf", float("-inf")), (".inf", None),
    ("1.0", 1), ("2024-01-01", "2024-01-01"), ("2024-01-01", "2024-01-01T00:00:00.000Z")])
def test_booleans_numbers_nulls_and_dates_match_yaml_1_1_or_1_2(written, declared):
    """What PyYAML (YAML 1.1) or js-yaml (1.2, dates and .inf as JSON.stringify writes them) reads."""
    assert differences(front(f"value: {written}\n"), {"value": declared}) == []


@pytest.mark.parametrize("written, declared", [("true", 1), ("1", True), ("no", "false"), ("y", True),
                                               ("0x1F", 1), ("null", "None"), ("2024-01-01", "2024-01-02")])
def test_a_plain_value_does_not_equal_another_value(written, declared):
    """A boolean is not a number, y is text to both loaders, and a reading must match exactly."""
    assert differences(front(f"value: {written}\n"), {"value": declared}) == ["value"]


def test_block_scalars_keep_folding_and_chomping():
    """| keeps lines, > folds them, - strips the last break, + keeps the blank lines after it."""
    parsed = front("a: |\n  one\n   two\nb: >-\n  one\n  two\n\n  three\nc: |+\n  x\n\nd: >\n  one\n    deep\n  two\n"
                   "end: x\n")
    assert parsed == {"a": "one\n two\n", "b": "one two\nthree", "c": "x\n\n", "d": "one\n  deep\ntwo\n", "end": "x"}


def test_a_block_scalar_that_ends_the_front_matter_may_lack_its_last_break():
    """A server that cut the block before the closing line read "x" where the whole file says "x\\n"."""
    parsed = front("description: |\n  x\n")
    assert parsed["description"] == "x\n"
    assert differences(parsed, {"description": "x"}) == [] and differences(parsed, {"description": "x\n"}) == []
    assert differences(parsed, {"description": "x\n\n"}) == ["description"]


def test_a_plain_value_continues_on_more_indented_lines():
    """Folded with spaces, a blank line a line break, a comment ending it."""
    assert front("description: one\n  two\n\n  three # note\nname: x\n") == {
        "description": "one two\nthree", "name": "x"}


def test_lists_and_maps_in_blocks_and_in_brackets():
    """Block lists (at the key's indentation too, with maps as items) and one-line flow lists and maps."""
    parsed = front("tags: [a, \"b c\", 3]\nmeta: {k: v, 'q': [1]}\nsteps:\n- one\n- name: two\n  run: x\n"
                   "nested:\n  - - a\n    - b\n")
    assert parsed == {"tags": ["a", "b c", "3"], "meta": {"k": "v", "q": ["1"]},
                      "steps": ["one", {"name": "two", "run": "x"}], "nested": [["a", "b"]]}
    assert differences(parsed, {"tags": ["a", "b c", 3], "meta": {"k": "v", "q": [1]},
                                "steps": ["one", {"name": "two", "run": "x"}], "nested": [["a", "b"]]}) == []
    assert differences(parsed, {**parsed, "tags": ["a", "b c"]}) == ["tags"]


def test_quoted_values_have_their_escapes():
    """'' in single quotes; \\n, \\t, \\" and \\u in double quotes; # and : inside quotes are text."""
    assert front("a: 'it''s # not: a comment'\nb: \"line\\n\\t\\\"q\\\" \\u00e9\"\n") == {
        "a": "it's # not: a comment", "b": "line\n\t\"q\" é"}


def test_comments_blank_lines_crlf_a_bom_and_a_closing_dot_line():
    """Windows line ends, a byte order mark, ... as the closing line: the same fields, the body after it."""
    fields, body = split("\ufeff---\r\n# a comment\r\nname: pdf  # trailing\r\n\r\nurl: http://x/#y\r\n...\r\nbody\r\n")
    assert fields == {"name": "pdf", "url": "http://x/#y"} and body == "body\r\n"


def test_no_front_matter_is_refused():
    """A SKILL.md must start with ---."""
    with pytest.raises(ValueError, match="first line must be ---"):
        split("# PDF\n---\nname: x\n---\n")


def test_an_unclosed_front_matter_is_refused():
    """No closing --- line: the rest of the file is not taken as YAML."""
    with pytest.raises(ValueError, match="not closed"):
        split("---\nname: x\ndescription: y\n")


def test_a_front_matter_over_the_limit_is_refused():
    """The bound on what a server's file makes the client parse."""
    with pytest.raises(ValueError, match=f"larger than {MAX_FRONT_MATTER_BYTES} bytes"):
        front("description: " + "x" * MAX_FRONT_MATTER_BYTES + "\n")


def test_nesting_deeper_than_the_limit_is_refused():
    """MAX_DEPTH maps in maps are read; one more is refused, in blocks and in brackets."""
    nested = "".join(f"{'  ' * level}k{level}:\n" for level in range(MAX_DEPTH - 1))
    assert front(nested + "  " * (MAX_DEPTH - 1) + "leaf: x\n")
    assert "nested deeper than" in refusal(nested + "  " * (MAX_DEPTH - 1) + "leaf:\n" + "  " * MAX_DEPTH + "x: y\n")
    assert "nested deeper than" in refusal("a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n")


def test_anchors_and_aliases_are_refused():
    """A few bytes of aliases can expand into a huge document: the line is named."""
    assert refusal("name: &n pdf\ndescription: *n\n") == (
        "front matter line 2: uses YAML this agent does not read (anchors, aliases, tags, complex keys, directives)")


@pytest.mark.parametrize("block", ["a: !!str 1\n", "? complex\n: key\n", "%YAML 1.2\na: b\n", "a: {[x]: 1}\n",
                                   "a: b\n&x c: d\n"])
def test_tags_complex_keys_and_directives_are_refused(block):
    """YAML outside the subset is refused rather than read some other way."""
    assert "uses YAML this agent does not read" in refusal(block)


def test_a_tab_in_the_indentation_is_refused():
    """YAML indents with spaces; the line with the tab is named."""
    assert refusal("metadata:\n\tauthor: me\n") == "front matter line 3: a tab in the indentation: indent with spaces"


def test_a_key_written_twice_is_refused():
    """Loaders disagree on which value wins: neither is taken, quoted or not."""
    assert refusal("name: a\ndescription: d\n'name': b\n") == "front matter line 4: the key 'name' is written twice"


@pytest.mark.parametrize("block, says", [
    ("description: Use when: the user asks\n", "with `: ` in it: put it in quotes"),
    ("on: x\n", "not read as text by every YAML loader"),
    ("- a\n- b\n", "must be `key: value` lines"),
    ("a: 'not\n  closed'\n", "must end on the same line"),
    ("a: [1,\n  2]\n", "must end on its line"),
    ("a: b\n  c: d\n", "put it in quotes"),
    ("a: 1 # c\n  b: 2\n", "indented more than the keys above it"),
    ("<<: {a: 1}\n", "not read as text by every YAML loader"),
    ("a: \"\\q\"\n", "unknown escape"),
    ("a: |2\n   x\n", "block scalar header"),
    ("a:\n- -\n- b\n", "YAML loaders read differently"),
    ("a: x\u2028y\n", "U+2028"),
])
def test_what_yaml_loaders_read_differently_or_refuse_is_refused(block, says):
    """A plain `: `, keys YAML 1.1 reads as booleans, a list at the top, values over several lines."""
    assert says in refusal(block)
