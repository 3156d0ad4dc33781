import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { connect, createSecureContext, createServer, type SecureVersion, type Server, type TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestRoot, issueEcnpj, issueServer } from "../../tools/adn-sim/icp-brasil.js";
import { withoutPeerCertificate } from "./tls-session.js";

// A real TLS server asking for a client certificate, as the ADN does, in each protocol version it may speak.
const root = createTestRoot("AC Raiz Sessao");
const serverCert = issueServer(root);
const client = issueEcnpj(root, { cnpj: "11222333000181" });
const context = createSecureContext({ key: client.keyPem, cert: client.certPem, ca: root.certPem });
const servers = new Map<SecureVersion, { server: Server; port: number; resumed: boolean[] }>();

beforeAll(async () => {
  for (const version of ["TLSv1.2", "TLSv1.3"] as const) {
    const resumed: boolean[] = [];
    const server = createServer(
      {
        key: serverCert.keyPem,
        cert: serverCert.certPem,
        ca: root.certPem,
        requestCert: true,
        rejectUnauthorized: true,
        maxVersion: version,
      },
      (socket) => socket.end(`${(socket.getPeerCertificate() as { subject?: { CN?: string } }).subject?.CN ?? ""}\n`),
    );
    server.on("secureConnection", (socket: TLSSocket) => resumed.push(socket.isSessionReused()));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    servers.set(version, { server, port: (server.address() as AddressInfo).port, resumed });
  }
});

afterAll(() => {
  for (const { server } of servers.values()) server.close();
});

/** One connection: what the client saw, the server's answer, and the session it was given. */
function exchange(version: SecureVersion, session?: Buffer) {
  const { port } = servers.get(version)!;
  return new Promise<{ reused: boolean; authorized: boolean; answer: string; session?: Buffer }>((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, servername: "localhost", secureContext: context, ...(session ? { session } : {}) });
    let reused = false;
    let authorized = false;
    let answer = "";
    let given: Buffer | undefined;
    socket.on("secureConnect", () => {
      reused = socket.isSessionReused();
      authorized = socket.authorized;
    });
    socket.on("session", (s: Buffer) => (given = s));
    socket.on("data", (d: Buffer) => (answer += d.toString()));
    socket.on("error", reject);
    socket.on("close", () => resolve({ reused, authorized, answer: answer.trim(), ...(given ? { session: given } : {}) }));
  });
}

/** The DER elements of a SEQUENCE's body, by tag (single-byte tags, as SSL_SESSION has). */
function topLevelTags(der: Buffer): number[] {
  const outerSize = der[1]! < 0x80 ? 1 : 1 + (der[1]! & 0x7f);
  const tags: number[] = [];
  for (let at = 1 + outerSize; at < der.length; ) {
    tags.push(der[at]!);
    const b = der[at + 1]!;
    const size = b < 0x80 ? 1 : 1 + (b & 0x7f);
    let length = b < 0x80 ? b : 0;
    for (let i = 1; i < size; i++) length = length * 256 + der[at + 1 + i]!;
    at += 1 + size + length;
  }
  return tags;
}

describe("withoutPeerCertificate", () => {
  it("keeps a TLS 1.3 session resumable, for the same client certificate, without the server's certificate", async () => {
    const version = "TLSv1.3";
    const first = await exchange(version);
    expect(first.reused).toBe(false);
    expect(first.session).toBeDefined();
    const kept = withoutPeerCertificate(first.session!);
    expect(topLevelTags(first.session!)).toContain(0xa3);
    expect(topLevelTags(kept)).not.toContain(0xa3);
    expect(topLevelTags(kept)).toEqual(topLevelTags(first.session!).filter((t) => t !== 0xa3));
    expect(first.session!.length - kept.length).toBeGreaterThan(serverCert.certPem.length / 2);

    const { resumed } = servers.get(version)!;
    resumed.length = 0;
    const again = await exchange(version, kept);
    expect(again).toMatchObject({ reused: true, authorized: true, answer: "EMPRESA TESTE LTDA:11222333000181" });
    expect(resumed).toEqual([true]);
  });

  it("keeps a TLS 1.2 session whole (Node refuses a resumed TLS 1.2 connection without the server's certificate), and it resumes", async () => {
    const first = await exchange("TLSv1.2");
    expect(first.session).toBeDefined();
    expect(topLevelTags(first.session!)).toContain(0xa3);
    expect(withoutPeerCertificate(first.session!)).toBe(first.session);
    const { resumed } = servers.get("TLSv1.2")!;
    resumed.length = 0;
    expect(await exchange("TLSv1.2", first.session)).toMatchObject({ reused: true, authorized: true });
    expect(resumed).toEqual([true]);
  });

  it("returns what is not a session it can read unchanged", () => {
    const cases = [
      Buffer.alloc(0),
      Buffer.from([0x04, 0x01, 0x00]), // not a SEQUENCE
      Buffer.from([0x30, 0x80, 0x02, 0x01, 0x01, 0x00, 0x00]), // indefinite length
      Buffer.from([0x30, 0x05, 0x02, 0x01, 0x01]), // shorter than its length says
      Buffer.from([0x30, 0x05, 0xa3, 0x09, 0x01, 0x02, 0x03]), // an element past the end
      Buffer.from([0x30, 0x04, 0x1f, 0x81, 0x01, 0x00]), // a multi-byte tag
      Buffer.from([0x30, 0x09, 0x02, 0x01, 0x01, 0x02, 0x02, 0x03, 0x04, 0x04, 0x00]), // TLS 1.3, no certificate
      Buffer.from([0x30, 0x0b, 0x02, 0x01, 0x01, 0x02, 0x02, 0x03, 0x03, 0xa3, 0x02, 0x04, 0x00]), // TLS 1.2
    ];
    for (const der of cases) expect(withoutPeerCertificate(der)).toBe(der);
  });

  it("drops the certificate element and re-encodes the outer length, long form included", () => {
    const certificate = Buffer.concat([Buffer.from([0xa3, 0x81, 0xc8]), Buffer.alloc(200, 7)]);
    const rest = Buffer.from([0x02, 0x01, 0x01, 0x02, 0x02, 0x03, 0x04, 0xa5, 0x03, 0x02, 0x01, 0x00]);
    const body = Buffer.concat([rest.subarray(0, 7), certificate, rest.subarray(7)]);
    const der = Buffer.concat([Buffer.from([0x30, 0x81, body.length]), body]);
    expect(withoutPeerCertificate(der)).toEqual(Buffer.concat([Buffer.from([0x30, rest.length]), rest]));
  });
});
