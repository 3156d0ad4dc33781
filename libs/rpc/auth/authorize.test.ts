// Every outcome of the authentication decision: public, disabled, no credential, a wrong one, a caller
// of another kind or name, and the caller a method admits.
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { VaultService } from "../../gen/malha/vault/v1/vault_pb.js";
import type { PeerIdentity } from "../context.js";
import { adminCaller, checkAccessTable, meshPeerCaller, type MethodAccess, publicTable, tenantCaller } from "./access.js";
import { authorize, type CallerAuth, type CallerResolver } from "./authorize.js";
import { callerName } from "./caller.js";
import { certificateAdminResolver, certificatePeerResolver, secretDigest, sharedSecretResolver } from "./resolvers.js";

const ADMIN_SECRET = "admin-secret-0123456789";
const PEER_SECRET = "peer-secret-0123456789";
const adminSecret = sharedSecretResolver({
  kind: "admin",
  name: "operator",
  header: "x-admin",
  setting: "ADMIN_SECRET",
  digest: secretDigest(ADMIN_SECRET),
});
const peerSecret = sharedSecretResolver({
  kind: "meshPeer",
  name: "gateway",
  header: "x-peer",
  setting: "PEER_SECRET",
  digest: secretDigest(PEER_SECRET),
});
const cert = (cn: string | undefined, sans: string[] = []): PeerIdentity => ({
  subjectCommonName: cn,
  subjectAltNames: sans,
  fingerprint256: "AB:CD",
});

function decide(access: MethodAccess, auth: CallerAuth, headers: Record<string, string> = {}, peer?: PeerIdentity) {
  return authorize("DoThing", access, auth, { header: new Headers(headers), peer });
}

function refusal(fn: () => unknown): [string, string] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    return [Code[(err as ConnectError).code], (err as ConnectError).rawMessage];
  }
  throw new Error("expected a refusal");
}

describe("authorize", () => {
  it("reads no credential for a public method, not even a wrong one", () => {
    const never: CallerResolver = { kind: "admin", proof: () => "x", resolve: () => expect.unreachable("resolved a public call") };
    expect(decide("public", { resolvers: [never] }, { "x-admin": "wrong" })).toBeUndefined();
  });

  it("refuses everyone with PERMISSION_DENIED when no kind the method admits can be authenticated here (fail closed)", () => {
    expect(refusal(() => decide([adminCaller], { resolvers: [peerSecret], unconfigured: { admin: "ADMIN_SECRET is not set" } }))).toEqual([
      "PermissionDenied",
      "DoThing is disabled: ADMIN_SECRET is not set",
    ]);
    expect(refusal(() => decide([tenantCaller], { resolvers: [] }, { "x-admin": ADMIN_SECRET }))).toEqual([
      "PermissionDenied",
      "DoThing is disabled: this service authenticates no tenant caller",
    ]);
  });

  it("answers UNAUTHENTICATED to a call without any credential, naming every way the method accepts", () => {
    const auth = { resolvers: [adminSecret, certificateAdminResolver(["ops", "root"])] };
    expect(refusal(() => decide([adminCaller], auth))).toEqual([
      "Unauthenticated",
      "DoThing is an administrative call and needs the x-admin header (ADMIN_SECRET) or a client certificate named 'ops' or 'root'; the caller is 'no client certificate'",
    ]);
    expect(refusal(() => decide([adminCaller, meshPeerCaller("gateway")], { resolvers: [adminSecret, peerSecret] }))).toEqual([
      "Unauthenticated",
      "DoThing is an administrative call or a call for the mesh peer 'gateway' and needs the x-admin header (ADMIN_SECRET) or the x-peer header (PEER_SECRET); the caller is 'no client certificate'",
    ]);
  });

  it("answers UNAUTHENTICATED to a wrong credential, even beside a right one", () => {
    const auth = { resolvers: [adminSecret, peerSecret] };
    expect(refusal(() => decide([adminCaller], auth, { "x-admin": `${ADMIN_SECRET}x` }))).toEqual([
      "Unauthenticated",
      "DoThing is an administrative call: the x-admin header is wrong",
    ]);
    expect(refusal(() => decide([adminCaller], auth, { "x-admin": ADMIN_SECRET, "x-peer": "nope" }))).toEqual([
      "Unauthenticated",
      "DoThing is an administrative call: the x-peer header is wrong",
    ]);
  });

  it("answers PERMISSION_DENIED to an authenticated caller of a kind or name the method does not admit", () => {
    const auth = { resolvers: [adminSecret, peerSecret] };
    expect(refusal(() => decide([adminCaller], auth, { "x-peer": PEER_SECRET }))).toEqual([
      "PermissionDenied",
      "DoThing is an administrative call and needs the x-admin header (ADMIN_SECRET); the caller is 'gateway'",
    ]);
    const peers = { resolvers: [certificatePeerResolver(["gateway"])] };
    expect(refusal(() => decide([meshPeerCaller("gateway")], peers, {}, cert("billing", ["DNS:billing.mesh"])))).toEqual([
      "PermissionDenied",
      "DoThing is a call for the mesh peer 'gateway' and needs a client certificate named 'gateway'; the caller is 'billing'",
    ]);
    // Names from certificates reach messages printable and bounded.
    expect(refusal(() => decide([meshPeerCaller("gateway")], peers, {}, cert(`bad\nname${"x".repeat(200)}`)))[1]).toMatch(
      /the caller is 'bad\?namex{120}'$/,
    );
  });

  it("returns the caller the method admits, the first one when a call proves several", () => {
    const auth = { resolvers: [adminSecret, peerSecret] };
    expect(decide([adminCaller], auth, { "x-admin": ADMIN_SECRET })).toEqual({
      kind: "admin",
      name: "operator",
      proof: "the x-admin header",
    });
    expect(decide([meshPeerCaller("gateway")], auth, { "x-admin": ADMIN_SECRET, "x-peer": PEER_SECRET })).toEqual({
      kind: "meshPeer",
      name: "gateway",
      proof: "the x-peer header",
    });
    const certs = { resolvers: [certificateAdminResolver(["ops"]), certificatePeerResolver(["gateway"])] };
    expect(decide([meshPeerCaller("gateway")], certs, {}, cert("pod-7", ["DNS:gateway"]))).toMatchObject({
      kind: "meshPeer",
      name: "gateway",
    });
    expect(decide([adminCaller], certs, {}, cert("laptop", ["DNS:ops"]))).toMatchObject({ kind: "admin", name: "ops" });
  });

  it("names tenant callers by their tenant, or by the network that vouches for them", () => {
    expect(callerName({ kind: "tenant", tenant: "acme", proof: "API token" })).toBe("tenant acme");
    expect(callerName({ kind: "tenant", tenant: null, proof: "trusted network" })).toBe("a caller the network vouches for");
  });
});

describe("checkAccessTable", () => {
  it("accepts a table naming every method once", () => {
    expect(() => checkAccessTable(VaultService, publicTable(VaultService))).not.toThrow();
  });

  it("refuses a missing method, an unknown one, an empty rule list and a mesh peer without a name, all in one message", () => {
    const { getClientCredentials: _left, ...rest } = publicTable(VaultService);
    expect(() =>
      checkAccessTable(VaultService, {
        ...rest,
        importCertificate: [] as unknown as MethodAccess,
        rotateMasterKey: [{ kind: "meshPeer", names: [] }],
        getClientCredential: "public",
      }),
    ).toThrow(
      "the access table of malha.vault.v1.VaultService is incomplete: ImportCertificate admits nobody; RotateMasterKey admits mesh peers without naming one; GetClientCredentials has no entry; getClientCredential is not a method of the service",
    );
  });
});
