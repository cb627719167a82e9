"""The URL library (k8s.io/apiserver pkg/cel/library/urls.go, type pkg/cel/url.go) on Go's `net/url`.

`url(s)` checks `s` with `url.ParseRequestURI` (an absolute URI or an absolute path, no fragment handling) and
keeps `url.Parse(s)`; `isURL(s)` is ParseRequestURI's verdict. Python's `urllib.parse` validates nothing (it
takes `https://a:b:c/`, which Go refuses for its port) and splits differently, so the parser here follows
Go's (golang/go@011829989365 src/net/url/url.go: `parse`, `getScheme`, `parseAuthority`, `parseHost`,
`validOptionalPort`, `unescape`, `shouldEscape`, `EscapedPath`, `String`, `ParseQuery`, `splitHostPort`),
over the bytes of the UTF-8 text, with the IP-literal checks Go 1.25 (Kubernetes 1.35's) added in its security
releases (https://pkg.go.dev/vuln/GO-2025-4010, https://go.dev/issue/77578). Go 1.26 also refuses a second
colon in a host (`http://localhost:80:80`); Go 1.25 does not, nor does this port.
A URL value is identified by Go's `URL.String()` (url.go `Equal` compares
those), and keeps the parts the getters return.
"""

from __future__ import annotations

import json
from typing import Any

from tools.apiserver.cel_library import net, values

TYPE = "kubernetes.URL"
_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HOST_OK = frozenset(b"!$&'()*+,;=:[]<>\"")
_USERINFO_OK = frozenset(b"-._:~!$&'()*+,;=%@")
_HEX = frozenset(b"0123456789abcdefABCDEF")
PATH, PATH_SEGMENT, HOST, ZONE, USER_PASSWORD, QUERY_COMPONENT, FRAGMENT = range(1, 8)


class URLError(ValueError):
    pass


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def should_escape(c: int, mode: int) -> bool:
    if c in _ALNUM:
        return False
    if mode in (HOST, ZONE) and c in _HOST_OK:
        return False
    if c in b"-_.~":
        return False
    if c in b"$&+,/:;=?@":
        if mode == PATH:
            return c == ord("?")
        if mode == PATH_SEGMENT:
            return c in b"/;,?"
        if mode == USER_PASSWORD:
            return c in b"@/?:"
        if mode == QUERY_COMPONENT:
            return True
        if mode == FRAGMENT:
            return False
    return not (mode == FRAGMENT and c in b"!()*")


def unescape(text: str, mode: int) -> str:
    raw = text.encode("utf-8", "surrogateescape")
    i, n, has_plus = 0, 0, False
    while i < len(raw):
        c = raw[i]
        if c == ord("%"):
            n += 1
            if i + 2 >= len(raw) or raw[i + 1] not in _HEX or raw[i + 2] not in _HEX:
                bad = raw[i:i + 3].decode("utf-8", "surrogateescape")
                raise URLError(f"invalid URL escape {_quote(bad)}")
            if mode == HOST and int(chr(raw[i + 1]), 16) < 8 and raw[i:i + 3] != b"%25":
                raise URLError(f"invalid URL escape {_quote(raw[i:i + 3].decode())}")
            if mode == ZONE:
                v = int(raw[i + 1:i + 3], 16)
                if raw[i:i + 3] != b"%25" and v != ord(" ") and should_escape(v, HOST):
                    raise URLError(f"invalid URL escape {_quote(raw[i:i + 3].decode())}")
            i += 3
        elif c == ord("+"):
            has_plus = mode == QUERY_COMPONENT
            i += 1
        else:
            if mode in (HOST, ZONE) and c < 0x80 and should_escape(c, mode):
                raise URLError(f"invalid character {_quote(chr(c))} in host name")
            i += 1
    if n == 0 and not has_plus:
        return text
    out = bytearray()
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == ord("%"):
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
            continue
        out.append(ord(" ") if c == ord("+") and mode == QUERY_COMPONENT else c)
        i += 1
    return out.decode("utf-8", "surrogateescape")


def escape(text: str, mode: int) -> str:
    out = []
    for c in text.encode("utf-8", "surrogateescape"):
        if c == ord(" ") and mode == QUERY_COMPONENT:
            out.append("+")
        elif should_escape(c, mode):
            out.append(f"%{c:02X}")
        else:
            out.append(chr(c))
    return "".join(out)


def _valid_optional_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= ch <= "9" for ch in port[1:]))


def _scheme(raw: str) -> tuple[str, str]:
    for i, ch in enumerate(raw):
        if "a" <= ch <= "z" or "A" <= ch <= "Z":
            continue
        if "0" <= ch <= "9" or ch in "+-.":
            if i == 0:
                return "", raw
            continue
        if ch == ":":
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return "", raw
    return "", raw


def _parse_host(host: str) -> str:
    """`parseHost`, with Go 1.25's IP-literal checks (go1.25.2, CVE-2025-47912: only an IPv6 address in
    brackets; CVE-2026-25679: a bracket only at the start of the host)."""
    bracket = host.rfind("[")
    if bracket > 0:
        raise URLError("invalid IP-literal")
    if bracket == 0:
        i = host.rfind("]")
        if i < 0:
            raise URLError("missing ']' in host")
        if not _valid_optional_port(host[i + 1:]):
            raise URLError(f"invalid port {_quote(host[i + 1:])} after host")
        colon_port = unescape(host[i + 1:], HOST)
        hostname = host[1:i]
        zone = hostname.find("%25")
        if zone >= 0:
            unescaped = unescape(hostname[:zone], HOST) + unescape(hostname[zone:], ZONE)
        else:
            unescaped = unescape(hostname, HOST)
        try:
            addr, _ = net.parse_addr(unescaped)
        except net.ParseAddrError as err:
            raise URLError(f"invalid host: {err}") from None
        if addr.version == 4:
            raise URLError("invalid IP-literal")
        return "[" + unescaped + "]" + colon_port
    if (i := host.rfind(":")) != -1 and not _valid_optional_port(host[i:]):
        raise URLError(f"invalid port {_quote(host[i:])} after host")
    return unescape(host, HOST)


def _parse_authority(authority: str) -> tuple[tuple[str, str | None] | None, str]:
    i = authority.rfind("@")
    host = _parse_host(authority[i + 1:] if i >= 0 else authority)
    if i < 0:
        return None, host
    userinfo = authority[:i]
    if not all(ch.isascii() and (ch.isalnum() or ord(ch) in _USERINFO_OK) for ch in userinfo):
        raise URLError("net/url: invalid userinfo")
    if ":" not in userinfo:
        return (unescape(userinfo, USER_PASSWORD), None), host
    user, _, password = userinfo.partition(":")
    return (unescape(user, USER_PASSWORD), unescape(password, USER_PASSWORD)), host


def _parse(raw: str, via_request: bool) -> dict[str, Any]:
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise URLError("empty url")
    url: dict[str, Any] = {"scheme": "", "opaque": "", "user": None, "host": "", "path": "", "raw_path": "",
                           "force_query": False, "raw_query": "", "fragment": "", "raw_fragment": ""}
    if raw == "*":
        url["path"] = "*"
        return url
    scheme, rest = _scheme(raw)
    url["scheme"] = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        url["force_query"], rest = True, rest[:-1]
    else:
        rest, _, url["raw_query"] = rest.partition("?")
    if not rest.startswith("/"):
        if url["scheme"]:
            url["opaque"] = rest
            return url
        if via_request:
            raise URLError("invalid URI for request")
        if ":" in rest.partition("/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    if (url["scheme"] or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, rest = rest[2:], ""
        if (slash := authority.find("/")) >= 0:
            authority, rest = authority[:slash], authority[slash:]
        url["user"], url["host"] = _parse_authority(authority)
    url["path"] = unescape(rest, PATH)
    url["raw_path"] = "" if escape(url["path"], PATH) == rest else rest
    return url


def _error(raw: str, err: URLError) -> URLError:
    return URLError(f"parse {_quote(raw)}: {err}")


def parse_request_uri(raw: str) -> dict[str, Any]:
    """Go's `url.ParseRequestURI`."""
    try:
        return _parse(raw, True)
    except URLError as err:
        raise _error(raw, err) from None


def parse(raw: str) -> dict[str, Any]:
    """Go's `url.Parse`: the fragment cut off first."""
    head, hash_sign, fragment = raw.partition("#")
    try:
        url = _parse(head, False)
    except URLError as err:
        raise _error(head, err) from None
    if hash_sign and fragment:
        try:
            url["fragment"] = unescape(fragment, FRAGMENT)
        except URLError as err:
            raise _error(raw, err) from None
        url["raw_fragment"] = "" if escape(url["fragment"], FRAGMENT) == fragment else fragment
    return url


def _valid_encoded(text: str, mode: int) -> bool:
    return all(c in b"!$&'()*+,;=:@[]%" or not should_escape(c, mode) for c in text.encode("utf-8", "surrogateescape"))


def escaped_path(url: dict[str, Any]) -> str:
    raw = url["raw_path"]
    if raw and _valid_encoded(raw, PATH):
        try:
            if unescape(raw, PATH) == url["path"]:
                return str(raw)
        except URLError:
            pass
    return "*" if url["path"] == "*" else escape(url["path"], PATH)


def _escaped_fragment(url: dict[str, Any]) -> str:
    raw = url["raw_fragment"]
    if raw and _valid_encoded(raw, FRAGMENT):
        try:
            if unescape(raw, FRAGMENT) == url["fragment"]:
                return str(raw)
        except URLError:
            pass
    return escape(url["fragment"], FRAGMENT)


def to_string(url: dict[str, Any]) -> str:
    """Go's `URL.String()`."""
    out = f"{url['scheme']}:" if url["scheme"] else ""
    if url["opaque"]:
        out += url["opaque"]
    else:
        user = url["user"]
        if url["scheme"] or url["host"] or user is not None:
            if url["host"] or url["path"] or user is not None:
                out += "//"
            if user is not None:
                out += escape(user[0], USER_PASSWORD)
                if user[1] is not None:
                    out += ":" + escape(user[1], USER_PASSWORD)
                out += "@"
            if url["host"]:
                out += escape(url["host"], HOST)
        path = escaped_path(url)
        if path and path[0] != "/" and url["host"]:
            out += "/"
        if not out and ":" in path.partition("/")[0]:
            out += "./"
        out += path
    if url["force_query"] or url["raw_query"]:
        out += "?" + url["raw_query"]
    if url["fragment"]:
        out += "#" + _escaped_fragment(url)
    return out


def _split_host_port(host_port: str) -> tuple[str, str]:
    host, port = host_port, ""
    colon = host.rfind(":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1:]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def query(raw_query: str) -> dict[str, list[str]]:
    """Go's `URL.Query()` (`ParseQuery`, malformed pairs dropped)."""
    result: dict[str, list[str]] = {}
    for pair in raw_query.split("&"):
        if not pair or ";" in pair:
            continue
        key, _, value = pair.partition("=")
        try:
            key, value = unescape(key, QUERY_COMPONENT), unescape(value, QUERY_COMPONENT)
        except URLError:
            continue
        result.setdefault(key, []).append(value)
    return result


# ---- functions -----------------------------------------------------------------------------------------------


def url(arg: Any) -> dict[str, Any]:
    if not isinstance(arg, str):
        raise values.no_overload("url", arg)
    try:
        parse_request_uri(arg)
        parsed = parse(arg)
    except URLError as err:
        raise ValueError(f"URL parse error during conversion from string: {err}") from None
    host, port = _split_host_port(parsed["host"])
    return values.encode(TYPE, to_string(parsed), scheme=parsed["scheme"], host=parsed["host"], hostname=host,
                         port=port, path=escaped_path(parsed), query=query(parsed["raw_query"]))


def is_url(arg: Any) -> bool:
    if not isinstance(arg, str):
        raise values.no_overload("isURL", arg)
    try:
        parse_request_uri(arg)
    except URLError:
        return False
    return True


def getter(part: str, function: str) -> Any:
    def get(arg: Any) -> Any:
        return values.extra(values.expect(arg, TYPE, function), part)

    get.__name__ = function
    return get
