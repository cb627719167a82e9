"""Does a CEL rule's outcome depend on a value that is unknown in this phase? (issue 45)

A first preview sends an output of another resource as unknown; `tools.apiserver.check` then does not judge a rule
that reads it. But a key that is absent is a known fact: an unknown leaf cannot add a sibling key. So a rule that
reads only known values and the presence of keys (`has(self.amiSelectorTerms)` on a `spec` whose `role` is unknown)
is judged in every phase.

What a rule reads is found from its text: each chain `self.a.b` (names as CEL sees them, escaped). A chain read
whole (it ends the expression, or a method, macro or index follows: `self.items.all(...)`, `self.x[0]`, `size(
self.x)`) reads every value under it; inside `has(...)` only the presence of the last key is read, so only the
chain's parent must be known. A chain that meets an absent key reads nothing beyond it (the key's absence is what
the rule sees). A bare `self` or an `oldSelf` chain is read whole. Any doubt counts as depending on the unknown:
the rule then stays an advisory, as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tools.engine.records import UNKNOWN, has_unknown

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_CHAIN = re.compile(rf"(?<![\w.])(has\(\s*)?(self|oldSelf)((?:\.{_IDENT})*)")


def reads_unknown(rule: str, self_value: Any, old_value: Any = None) -> bool:
    """Whether evaluating `rule` with `self` = `self_value` may read a value that is unknown (`UNKNOWN`)."""
    if not has_unknown(self_value) and not has_unknown(old_value):
        return False
    for match in _CHAIN.finditer(rule):
        in_has, root, tail = match.group(1), match.group(2), match.group(3)
        names = [n for n in tail.split(".") if n]
        after = rule[match.end():].lstrip()
        if after.startswith("("):  # the last name is a method or macro of the value before it (`self.x.all(`)
            names = names[:-1]
        value = self_value if root == "self" else old_value
        if in_has and names and after.startswith(")"):
            names, presence_only = names[:-1], True  # has(self.a.b): a must be known, b only present or not
        else:
            presence_only = False
        for name in names:
            if value == UNKNOWN:
                return True
            if not isinstance(value, Mapping) or name not in value:
                value = None  # an absent key (or a type error the rule reports itself): nothing beyond it is read
                break
            value = value[name]
        else:
            if presence_only:
                if value == UNKNOWN:
                    return True
                continue
            if has_unknown(value):
                return True
    return False
