// Which peers may assert a user through the identity-aware proxy's header (CONSOLE_TRUST_PROXY_CIDRS): the
// proxy's addresses. With the list set, the header from any other address is ignored, so a client that
// reaches the console past the proxy cannot name itself an operator.
import { BlockList, isIPv4, isIPv6 } from "node:net";

export interface ProxyPeers {
  /** As configured, for the log line at start. */
  cidrs: string[];
  allows(remoteAddress: string | undefined): boolean;
}

/** "10.0.0.0/8, 192.168.1.10/32, ::1/128" (a bare address is one host); throws naming the bad entry. */
export function parseProxyCidrs(value: string): ProxyPeers {
  const list = new BlockList();
  const cidrs = value
    .split(",")
    .map((c) => c.trim())
    .filter(Boolean);
  if (cidrs.length === 0) throw new Error("lists no address: give CIDRs such as 10.0.0.0/8 or leave it unset");
  for (const cidr of cidrs) {
    const [net, bits, extra] = cidr.split("/");
    const type = isIPv4(net ?? "") ? "ipv4" : isIPv6(net ?? "") ? "ipv6" : undefined;
    const max = type === "ipv4" ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
    if (!type || extra !== undefined || !(prefix >= 0 && prefix <= max)) throw new Error(`has "${cidr}", not an address or CIDR`);
    list.addSubnet(net!, prefix, type);
  }
  return {
    cidrs,
    allows(remote) {
      if (!remote) return false;
      // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
      const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remote)?.[1];
      if (v4) return list.check(v4, "ipv4");
      return list.check(remote, isIPv4(remote) ? "ipv4" : "ipv6");
    },
  };
}
