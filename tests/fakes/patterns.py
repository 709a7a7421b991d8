"""Text the fakes return and the tests expect, made in one place."""


def pattern_text(size: int) -> str:
    """`size` characters that differ line by line, with text beyond ASCII in every line."""
    lines, total = [], 0
    while total < size:
        lines.append(f"line {len(lines):07d}: caf\u00e9 \u4e2d\u6587 {'x' * (len(lines) % 17)}\n")
        total += len(lines[-1])
    return "".join(lines)[:size]
