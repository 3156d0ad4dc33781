// Webhook URLs are tenants' input: a delivery must not become a request into our own network (cloud
// metadata, the database, the mesh). Addresses are checked when the socket connects — after DNS, so a
// name that resolves to a private address (or starts to, DNS rebinding) is refused too
// (docs/decisions/0012-webhooks-to-public-addresses-only.md).
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const)
  PRIVATE.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const)
  PRIVATE.addSubnet(net, prefix, "ipv6");

/** The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, or NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether an IP address is reachable on the public internet (not loopback, private, link-local, …). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== undefined) return isPublicAddress(v4);
    return !PRIVATE.check(address, "ipv6");
  }
  return !PRIVATE.check(address, "ipv4");
}

export class PrivateAddressError extends Error {
  override name = "PrivateAddressError";
  readonly code = "EPRIVATEADDRESS";
}

const refusal = (host: string, address: string) =>
  new PrivateAddressError(`${host} resolves to ${address}, which is not a public address (BILLING_WEBHOOK_ALLOW_PRIVATE)`);

/** A socket `lookup` that resolves as usual and refuses any non-public answer. */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, "", 0);
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) return callback(refusal(hostname, bad.address), "", 0);
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
};

/** For a URL whose host is an IP literal: the refusal, if that address is not public. */
export function literalAddressProblem(url: string): string | undefined {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0 || isPublicAddress(host)) return undefined;
  return `${host} is not a public address (BILLING_WEBHOOK_ALLOW_PRIVATE)`;
}
