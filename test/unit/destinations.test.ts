/**
 * The destination policy's verdicts on addresses and names: nothing that leads into the
 * machine, its network or a cloud control plane is public, whatever form it is written in.
 */
import { describe, expect, it } from "vitest";
import { allowPrivateNetwork, readEnv } from "@/config/env";
import {
  isLocalHostName,
  isPublicAddress,
  literalAddress,
  nonPublicRange,
} from "@/security/destinations";

describe("no address that leads inward is public", () => {
  const inward: [string, string][] = [
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.5", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local, cloud metadata"],
    ["100.64.0.1", "CGNAT shared address space"],
    ["100.100.100.200", "CGNAT shared address space"],
    ["0.0.0.0", "this network"],
    ["0.1.2.3", "this network"],
    ["192.0.0.192", "IETF protocol assignments"],
    ["192.0.2.10", "documentation"],
    ["198.51.100.7", "documentation"],
    ["203.0.113.9", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd00:ec2::254", "unique-local"],
    ["ff02::1", "multicast"],
    ["fec0::1", "site-local"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2001::1", "IETF protocol assignments"],
    ["64:ff9b:1::1", "local-use NAT64"],
    ["::127.0.0.1", "reserved"],
    ["100::1", "reserved"],
    ["[::1]", "loopback"],
  ];
  it.each(inward)("%s is %s", (address, range) => {
    expect(nonPublicRange(address)).toBe(range);
    expect(isPublicAddress(address)).toBe(false);
  });

  const carried: [string, string][] = [
    ["::ffff:127.0.0.1", "loopback, IPv4-mapped"],
    ["::ffff:7f00:1", "loopback, IPv4-mapped"],
    ["::FFFF:169.254.169.254", "link-local, cloud metadata, IPv4-mapped"],
    ["::ffff:10.0.0.5", "private, IPv4-mapped"],
    ["::ffff:0.0.0.0", "this network, IPv4-mapped"],
    ["64:ff9b::127.0.0.1", "loopback, NAT64"],
    ["64:ff9b::a9fe:a9fe", "link-local, cloud metadata, NAT64"],
    ["2002:7f00:1::", "loopback, 6to4"],
    ["2002:c0a8:101::1", "private, 6to4"],
  ];
  it.each(carried)("an IPv6 address carrying an IPv4 one is judged by it: %s", (address, range) => {
    expect(nonPublicRange(address)).toBe(range);
  });

  it("what does not parse as an address is not public", () => {
    for (const text of ["", "localhost", "127.0.0.1.5", "1.2.3", "::ffff::1", "example.com"]) {
      expect(isPublicAddress(text), text).toBe(false);
    }
  });
});

describe("public addresses stay reachable", () => {
  const outside = [
    "1.1.1.1",
    "8.8.8.8",
    "93.184.215.14",
    "172.15.255.255",
    "172.32.0.1",
    "100.63.255.255",
    "100.128.0.1",
    "169.253.1.1",
    "192.0.1.1",
    "198.17.255.255",
    "198.20.0.1",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "2001:4860:4860::8888",
  ];
  it.each(outside)("%s is public", (address) => {
    expect(nonPublicRange(address)).toBeNull();
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe("names that mean this machine are refused before any lookup", () => {
  it("localhost and every name under it, in any case, with a trailing dot", () => {
    for (const name of [
      "localhost",
      "LOCALHOST",
      "localhost.",
      "api.localhost",
      "a.b.Localhost.",
    ]) {
      expect(isLocalHostName(name), name).toBe(true);
    }
  });

  it("names that merely contain it are ordinary names", () => {
    for (const name of ["localhost.example.com", "mylocalhost", "localhostx", "example.com"]) {
      expect(isLocalHostName(name), name).toBe(false);
    }
  });
});

describe("literal addresses are recognised as a URL writes them", () => {
  it("bracketed IPv6 and dotted IPv4 are addresses; names are not", () => {
    expect(literalAddress("[::1]")).toBe("::1");
    expect(literalAddress(new URL("http://[::ffff:127.0.0.1]/").hostname)).toBe("::ffff:7f00:1");
    expect(literalAddress(new URL("http://0x7f.1/").hostname)).toBe("127.0.0.1");
    expect(literalAddress("10.0.0.5")).toBe("10.0.0.5");
    expect(literalAddress("example.com")).toBeNull();
  });
});

describe("CELLFLOW_ALLOW_PRIVATE_NETWORK opens the private network only when it says 1", () => {
  it("1 allows; unset, empty, 0 and anything unparsable keep the guard on", () => {
    const flag = (v: string | undefined) =>
      allowPrivateNetwork({ CELLFLOW_ALLOW_PRIVATE_NETWORK: v });
    expect(flag("1")).toBe(true);
    for (const v of [undefined, "", "0", "true", "yes", " 1"])
      expect(flag(v), String(v)).toBe(false);
  });

  it("is read each time, so a change of the environment takes effect at once", () => {
    const source: Record<string, string | undefined> = { CELLFLOW_ALLOW_PRIVATE_NETWORK: "0" };
    expect(allowPrivateNetwork(source)).toBe(false);
    source.CELLFLOW_ALLOW_PRIVATE_NETWORK = "1";
    expect(allowPrivateNetwork(source)).toBe(true);
  });

  it("start-up validation names a bad value", () => {
    expect(() => readEnv({ CELLFLOW_ALLOW_PRIVATE_NETWORK: "yes" })).toThrow(
      /CELLFLOW_ALLOW_PRIVATE_NETWORK: must be 0 or 1/,
    );
    expect(readEnv({}).CELLFLOW_ALLOW_PRIVATE_NETWORK).toBe(false);
  });
});
