"""The IP and CIDR libraries (k8s.io/apiserver pkg/cel/library/ip.go, cidr.go; types pkg/cel/ip.go, cidr.go),
on Go's `net/netip` parsing, whose error texts the library returns as its own.

`parse_addr` is `netip.ParseAddr` (golang/go@051bdf3fd12a src/net/netip/netip.go, `parseIPv4`, `parseIPv6`):
no leading zeros in an IPv4 octet, an embedded IPv4 only as the last 32 bits, zones after `%`. Python's
`ipaddress` takes other inputs (it takes `::ffff:1.2.3.4` as IPv6 and refuses zones only in some versions) and
words its errors differently, so the parser is Go's; `ipaddress` then does the arithmetic and the classes.
The library then refuses what netip takes: a zone, and an IPv4-mapped IPv6 address (ip.go `parseIPAddr`,
cidr.go `parseCIDR`).

Values: an IP is identified by its canonical text (netip's `Addr.String`, RFC 5952: Python's `ipaddress`
prints the same for what the library accepts), so `==` is netip's `Addr ==`; a CIDR by its address and
length, unmasked (`Prefix ==`: `cidr('10.0.0.1/8') != cidr('10.0.0.0/8')`).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping
from typing import Any

from tools.apiserver.cel_library import values

IP_TYPE = "net.IP"
CIDR_TYPE = "net.CIDR"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _quote(text: str) -> str:
    """Go's strconv.Quote for the texts here (ASCII; JSON's escapes agree for quotes and backslashes)."""
    return json.dumps(text, ensure_ascii=False)


class ParseAddrError(ValueError):
    def __init__(self, text: str, msg: str, at: str = "") -> None:
        suffix = f" (at {_quote(at)})" if at else ""
        super().__init__(f"ParseAddr({_quote(text)}): {msg}{suffix}")
        self.msg = msg


def _parse_ipv4(text: str, whole: str | None = None) -> bytes:
    fields: list[int] = []
    val, dig_len = 0, 0
    for i, ch in enumerate(text):
        if "0" <= ch <= "9":
            if dig_len == 1 and val == 0:
                raise ParseAddrError(text, "IPv4 field has octet with leading zero")
            val = val * 10 + int(ch)
            dig_len += 1
            if val > 255:
                raise ParseAddrError(text, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(text) - 1 or text[i - 1] == ".":
                raise ParseAddrError(text, "IPv4 field must have at least one digit", text[i:])
            if len(fields) == 3:
                raise ParseAddrError(text, "IPv4 address too long")
            fields.append(val)
            val, dig_len = 0, 0
        else:
            raise ParseAddrError(text, "unexpected character", text[i:])
    if len(fields) < 3:
        raise ParseAddrError(text, "IPv4 address too short")
    return bytes([*fields, val])


def _parse_ipv6(whole: str) -> tuple[bytes, str]:
    s, zone = whole, ""
    if "%" in s:
        s, zone = s.split("%", 1)
        if not zone:
            raise ParseAddrError(whole, "zone must be a non-empty string")
    ip = bytearray(16)
    ellipsis = -1
    if len(s) >= 2 and s[0] == ":" and s[1] == ":":
        ellipsis = 0
        s = s[2:]
        if not s:
            return bytes(ip), zone
    i = 0
    while i < 16:
        off, acc = 0, 0
        while off < len(s) and s[off] in "0123456789abcdefABCDEF":
            acc = (acc << 4) + int(s[off], 16)
            if acc > 0xFFFF:
                raise ParseAddrError(whole, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise ParseAddrError(whole, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise ParseAddrError(whole, "embedded IPv4 address must replace the final 2 fields of the address", s)
            if i + 4 > 16:
                raise ParseAddrError(whole, "too many hex fields to fit an embedded IPv4 at the end of the address", s)
            try:
                ip[i:i + 4] = _parse_ipv4(s)
            except ParseAddrError as err:
                raise ParseAddrError(whole, str(err), s) from None
            s = ""
            i += 4
            break
        ip[i], ip[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise ParseAddrError(whole, "unexpected character, want colon", s)
        if len(s) == 1:
            raise ParseAddrError(whole, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise ParseAddrError(whole, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        raise ParseAddrError(whole, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise ParseAddrError(whole, "address string too short")
        n = 16 - i
        ip[ellipsis + n:16] = ip[ellipsis:i]
        ip[ellipsis:ellipsis + n] = bytes(n)
    elif ellipsis >= 0:
        raise ParseAddrError(whole, "the :: must expand to at least one field of zeros")
    return bytes(ip), zone


def parse_addr(text: str) -> tuple[Address, str]:
    """Go's `netip.ParseAddr`: the address and its zone, or ParseAddrError with Go's text."""
    for ch in text:
        if ch == ".":
            return ipaddress.IPv4Address(_parse_ipv4(text)), ""
        if ch == ":":
            packed, zone = _parse_ipv6(text)
            return ipaddress.IPv6Address(packed), zone
        if ch == "%":
            raise ParseAddrError(text, "missing IPv6 address")
    raise ParseAddrError(text, "unable to parse IP")


def _is_4in6(addr: Address) -> bool:
    return isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None


def go_string(addr: Address) -> str:
    """netip's `Addr.String` for the addresses the library keeps (no zone, not IPv4-mapped): RFC 5952."""
    return str(addr)


def parse_ip(text: str) -> Address:
    """ip.go `parseIPAddr`."""
    try:
        addr, zone = parse_addr(text)
    except ParseAddrError as err:
        raise ValueError(f"IP Address {_quote(text)} parse error during conversion from string: {err}") from None
    if zone:
        raise ValueError(f"IP address {_quote(text)} with zone value is not allowed")
    if _is_4in6(addr):
        raise ValueError(f"IPv4-mapped IPv6 address {_quote(text)} is not allowed")
    return addr


def parse_prefix(text: str) -> tuple[Address, int]:
    """Go's `netip.ParsePrefix` (the address is not masked)."""
    where = f"netip.ParsePrefix({_quote(text)})"
    slash = text.rfind("/")
    if slash < 0:
        raise ValueError(f"{where}: no '/'")
    try:
        addr, zone = parse_addr(text[:slash])
    except ParseAddrError as err:
        raise ValueError(f"{where}: {err}") from None
    if zone:
        raise ValueError(f"{where}: IPv6 zones cannot be present in a prefix")
    bits_text = text[slash + 1:]
    body = bits_text[1:] if bits_text[:1] in ("+", "-") else bits_text
    if not body or not body.isascii() or not body.isdigit():  # strconv.Atoi
        raise ValueError(f"{where}: bad bits after slash: {_quote(bits_text)}")
    bits = int(bits_text)
    if bits < 0 or bits > addr.max_prefixlen:
        raise ValueError(f"{where}: prefix length out of range")
    return addr, bits


def parse_cidr(text: str) -> tuple[Address, int]:
    """cidr.go `parseCIDR`, with `stringToCIDR`'s prefix (the library prefixes the message twice)."""
    lead = "network address parse error during conversion from string: "
    try:
        addr, bits = parse_prefix(text)
    except ValueError as err:
        raise ValueError(f"{lead}{lead}{err}") from None
    if _is_4in6(addr):
        raise ValueError(f"{lead}IPv4-mapped IPv6 address {_quote(text)} is not allowed")
    return addr, bits


def _ip_value(addr: Address) -> dict[str, Any]:
    return values.encode(IP_TYPE, go_string(addr))


def _cidr_value(addr: Address, bits: int) -> dict[str, Any]:
    return values.encode(CIDR_TYPE, f"{go_string(addr)}/{bits}")


def _addr(value: Mapping[str, Any]) -> Address:
    return ipaddress.ip_address(values.identity(value))


def _prefix(value: Mapping[str, Any]) -> tuple[Address, int]:
    text, _, bits = str(values.identity(value)).rpartition("/")
    return ipaddress.ip_address(text), int(bits)


def _network(addr: Address, bits: int) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(f"{addr}/{bits}", strict=False)


# ---- functions -----------------------------------------------------------------------------------------------


def ip(arg: Any) -> dict[str, Any]:
    """`ip(string)` (ip.go `stringToIP`) and `<CIDR>.ip()` (cidr.go `cidrToIP`)."""
    if isinstance(arg, str):
        return _ip_value(parse_ip(arg))
    if values.type_of(arg) == CIDR_TYPE:
        return _ip_value(_prefix(arg)[0])
    raise values.no_overload("ip", arg)


def is_ip(arg: Any) -> bool:
    if not isinstance(arg, str):
        raise values.no_overload("isIP", arg)
    try:
        parse_ip(arg)
    except ValueError:
        return False
    return True


def ip_is_canonical(arg: Any) -> bool:
    """`ip.isCanonical(string)`: netip's text of the address is the string."""
    if not isinstance(arg, str):
        raise values.no_overload("ip.isCanonical", arg)
    return go_string(parse_ip(arg)) == arg


def family(arg: Any) -> int:
    return _addr(values.expect(arg, IP_TYPE, "family")).version


def is_unspecified(arg: Any) -> bool:
    return _addr(values.expect(arg, IP_TYPE, "isUnspecified")).is_unspecified


def is_loopback(arg: Any) -> bool:
    """netip `IsLoopback`: 127.0.0.0/8, ::1."""
    addr = _addr(values.expect(arg, IP_TYPE, "isLoopback"))
    return addr.packed[0] == 127 if addr.version == 4 else int(addr) == 1


def is_link_local_multicast(arg: Any) -> bool:
    """netip `IsLinkLocalMulticast`: 224.0.0.0/24, ff02::/16 (the high word masked with 0xff0f)."""
    packed = _addr(values.expect(arg, IP_TYPE, "isLinkLocalMulticast")).packed
    if len(packed) == 4:
        return packed[:3] == b"\xe0\x00\x00"
    return (int.from_bytes(packed[:2], "big") & 0xFF0F) == 0xFF02


def is_link_local_unicast(arg: Any) -> bool:
    """netip `IsLinkLocalUnicast`: 169.254.0.0/16, fe80::/10."""
    packed = _addr(values.expect(arg, IP_TYPE, "isLinkLocalUnicast")).packed
    if len(packed) == 4:
        return packed[:2] == b"\xa9\xfe"
    return (int.from_bytes(packed[:2], "big") & 0xFFC0) == 0xFE80


def is_global_unicast(arg: Any) -> bool:
    """netip `IsGlobalUnicast`: not unspecified, broadcast (IPv4), loopback, multicast or link-local unicast;
    private and unique-local addresses count as global."""
    addr = _addr(values.expect(arg, IP_TYPE, "isGlobalUnicast"))
    if addr.version == 4 and addr.packed == b"\xff\xff\xff\xff":
        return False
    return not (addr.is_unspecified or is_loopback(arg) or addr.is_multicast or is_link_local_unicast(arg))


def cidr(arg: Any) -> dict[str, Any]:
    if not isinstance(arg, str):
        raise values.no_overload("cidr", arg)
    return _cidr_value(*parse_cidr(arg))


def is_cidr(arg: Any) -> bool:
    if not isinstance(arg, str):
        raise values.no_overload("isCIDR", arg)
    try:
        parse_cidr(arg)
    except ValueError:
        return False
    return True


def contains_ip(arg: Any, other: Any) -> bool:
    """netip `Prefix.Contains`: an address of the other family is never contained."""
    addr, bits = _prefix(values.expect(arg, CIDR_TYPE, "containsIP", other))
    target = _addr(ip(other) if isinstance(other, str) else values.expect(other, IP_TYPE, "containsIP", arg))
    return target.version == addr.version and target in _network(addr, bits)


def contains_cidr(arg: Any, other: Any) -> bool:
    """cidr.go `cidrContainsCIDR`: the prefixes overlap and the receiver's is no longer."""
    addr, bits = _prefix(values.expect(arg, CIDR_TYPE, "containsCIDR", other))
    inner = cidr(other) if isinstance(other, str) else values.expect(other, CIDR_TYPE, "containsCIDR", arg)
    other_addr, other_bits = _prefix(inner)
    if addr.version != other_addr.version:
        return False
    return _network(addr, bits).overlaps(_network(other_addr, other_bits)) and bits <= other_bits


def prefix_length(arg: Any) -> int:
    return _prefix(values.expect(arg, CIDR_TYPE, "prefixLength"))[1]


def masked(arg: Any) -> dict[str, Any]:
    addr, bits = _prefix(values.expect(arg, CIDR_TYPE, "masked"))
    return _cidr_value(_network(addr, bits).network_address, bits)


def to_string(arg: Any) -> str:
    """`string(<IP>)`, `string(<CIDR>)`: netip's text."""
    return str(values.identity(arg))
