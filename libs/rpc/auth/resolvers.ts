// Resolvers for the credentials more than one service may use: a shared secret in a header, a client
// certificate's names (mesh mTLS). Tenant tokens are billing's (services/billing/auth).
import { createHash, timingSafeEqual } from "node:crypto";
import type { PeerIdentity } from "../context.js";
import type { AccessRule } from "./access.js";
import type { CallerResolver } from "./authorize.js";
import { printable } from "./authorize.js";

export interface SharedSecretOptions {
  kind: "admin" | "meshPeer";
  /** Who holds the secret: the caller's name once it matched. */
  name: string;
  header: string;
  /** The setting that configures it, named in refusals. */
  setting: string;
  /** `secretDigest(secret)`: the secret itself need not stay in memory. */
  digest: Buffer;
}

/** A caller that sends the secret in `header`; compared by digest in constant time. */
export function sharedSecretResolver({ kind, name, header, setting, digest: expected }: SharedSecretOptions): CallerResolver {
  return {
    kind,
    proof: () => `the ${header} header (${setting})`,
    resolve({ header: headers }) {
      const given = headers.get(header);
      if (given === null || given === "") return undefined;
      // Digests have equal length whatever was sent, so the comparison time says nothing about the secret.
      if (!timingSafeEqual(secretDigest(given), expected)) return { rejected: `the ${header} header is wrong` };
      return { caller: { kind, name, proof: `the ${header} header` } };
    },
  };
}

/** Administrators by their client certificate: one whose CN or DNS SAN is among `identities`. */
export function certificateAdminResolver(identities: readonly string[]): CallerResolver {
  return {
    kind: "admin",
    proof: () => `a client certificate named ${identities.map((i) => `'${i}'`).join(" or ")}`,
    resolve({ peer }) {
      const name = certificateNames(peer).find((n) => identities.includes(n));
      return name === undefined ? undefined : { caller: { kind: "admin", name, proof: "client certificate" } };
    },
  };
}

/**
 * Any verified client certificate is a mesh peer: named by the first of `known` its CN or DNS SANs carry
 * (the names access tables admit), else by its CN, so a refusal says who called.
 */
export function certificatePeerResolver(known: readonly string[]): CallerResolver {
  return {
    kind: "meshPeer",
    proof: (rule: AccessRule) =>
      `a client certificate named ${(rule.kind === "meshPeer" ? rule.names : known).map((n) => `'${n}'`).join(" or ")}`,
    resolve({ peer }) {
      if (peer === undefined) return undefined;
      const names = certificateNames(peer);
      const name = names.find((n) => known.includes(n)) ?? names[0] ?? `certificate ${peer.fingerprint256}`;
      return { caller: { kind: "meshPeer", name: printable(name), proof: "client certificate" } };
    },
  };
}

/** The subject CN first, then the DNS subject alternative names. */
export function certificateNames(peer: PeerIdentity | undefined): string[] {
  const names = (peer?.subjectAltNames ?? []).filter((n) => n.startsWith("DNS:")).map((n) => n.slice(4));
  return peer?.subjectCommonName ? [peer.subjectCommonName, ...names] : names;
}

export function secretDigest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
