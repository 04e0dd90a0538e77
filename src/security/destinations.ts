/**
 * Which destinations outbound requests may reach. Invariant: an address is public only if
 * it is in no special-purpose range that leads into the machine, its network or a cloud
 * provider's control plane (loopback, private, link-local with the metadata endpoints,
 * CGNAT, unique-local, …); an IPv6 address that carries an IPv4 address (mapped, NAT64,
 * 6to4) is judged by the IPv4 address it carries; anything that does not parse is not
 * public. Pure: no DNS, no environment. The outbound door (`src/net/outbound.ts`)
 * applies it to every address a connection is about to use.
 */
import { isIP, isIPv4, isIPv6 } from "node:net";

/** The range an address falls in when it is not public, e.g. "loopback"; null when public. */
export function nonPublicRange(address: string): string | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return ipv4Range(parseIpv4(bare));
  const groups = parseIpv6(bare);
  return groups ? ipv6Range(groups) : "not an IP address";
}

export function isPublicAddress(address: string): boolean {
  return nonPublicRange(address) === null;
}

/**
 * Names that mean this machine whatever DNS says (RFC 6761: `localhost` and every name
 * under it), so they are refused before any lookup.
 */
export function isLocalHostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

/** A literal IP address as it appears in a URL's host (IPv6 in brackets) or bare. */
export function literalAddress(host: string): string | null {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return isIP(bare) ? bare : null;
}

/** [first address, prefix length, range name]; the first match wins, so narrower ranges come first. */
type V4Range = readonly [string, number, string];

const IPV4_RANGES: readonly V4Range[] = [
  ["0.0.0.0", 8, "this network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "CGNAT shared address space"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local, cloud metadata"],
  ["172.16.0.0", 12, "private"],
  // Holds 192.0.0.192, a cloud provider's metadata endpoint, among protocol assignments.
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay anycast"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["255.255.255.255", 32, "broadcast"],
  ["240.0.0.0", 4, "reserved"],
];

const IPV4_TABLE = IPV4_RANGES.map(([first, bits, name]) => ({
  base: parseIpv4(first),
  mask: bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0,
  name,
}));

function ipv4Range(value: number): string | null {
  for (const r of IPV4_TABLE) if ((value & r.mask) >>> 0 === r.base) return r.name;
  return null;
}

/** Dotted-quad text (already validated by isIPv4) to an unsigned 32-bit number. */
function parseIpv4(text: string): number {
  return text.split(".").reduce((acc, part) => ((acc << 8) | Number(part)) >>> 0, 0);
}

/** Eight 16-bit groups, or null when the text is not an IPv6 address. A zone (%eth0) is ignored. */
function parseIpv6(text: string): number[] | null {
  let s = text.split("%")[0] ?? "";
  if (!isIPv6(s)) return null;
  if (s.includes(".")) {
    // The last 32 bits written as a dotted quad (::ffff:127.0.0.1): rewrite as two groups.
    const at = s.lastIndexOf(":");
    const v4 = parseIpv4(s.slice(at + 1));
    s = `${s.slice(0, at + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [left = "", right] = s.split("::");
  const head = left === "" ? [] : left.split(":");
  const tail = right === undefined || right === "" ? [] : right.split(":");
  const fill = right === undefined ? 0 : 8 - head.length - tail.length;
  const groups = [...head, ...Array<string>(fill).fill("0"), ...tail].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null;
}

function embeddedIpv4(hi: number, lo: number): number {
  return ((hi << 16) | lo) >>> 0;
}

/** An IPv6 range whose address carries an IPv4 address is judged by that address. */
function carried(label: string, v4: number): string | null {
  const range = ipv4Range(v4);
  return range ? `${range}, ${label}` : null;
}

function ipv6Range(g: number[]): string | null {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(8)) return "unspecified";
  if (zeroTo(7) && g7 === 1) return "loopback";
  if (zeroTo(5) && g5 === 0xffff) return carried("IPv4-mapped", embeddedIpv4(g6, g7));
  // NAT64 well-known prefix: the gateway connects to the IPv4 address in the last 32 bits.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return carried("NAT64", embeddedIpv4(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "local-use NAT64";
  if (g0 === 0x2002) return carried("6to4", embeddedIpv4(g1, g2));
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  if ((g0 & 0xffc0) === 0xfec0) return "site-local";
  if ((g0 & 0xfe00) === 0xfc00) return "unique-local";
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x2001 && g1 === 0x0db8) return "documentation";
  if (g0 === 0x3fff && (g1 & 0xf000) === 0) return "documentation";
  // IETF protocol assignments: Teredo (its client address is hidden), ORCHID, benchmarking.
  if (g0 === 0x2001 && (g1 & 0xfe00) === 0) return "IETF protocol assignments";
  // Only 2000::/3 is global unicast; the rest (::/96 IPv4-compatible, 100::/64 discard, …)
  // is reserved or special.
  if ((g0 & 0xe000) !== 0x2000) return "reserved";
  return null;
}
