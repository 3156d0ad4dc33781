import { once } from "node:events";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestRoot, issueEcnpj, issueServer } from "../../tools/adn-sim/icp-brasil.js";
import { AdnHttpClient, AdnHttpFailure } from "./http.js";

// A real HTTPS server asking for client certificates, as the ADN does.
const trusted = createTestRoot("AC Raiz Confiavel");
const stranger = createTestRoot("AC Raiz Estranha");
const client = issueEcnpj(trusted, { cnpj: "11222333000181" });
let server: Server;
let base = "";

beforeAll(async () => {
  const cert = issueServer(trusted);
  server = createServer(
    { key: cert.keyPem, cert: cert.certPem, ca: trusted.certPem, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ subject: peer.subject?.CN ?? "" }));
    },
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
});

const creds = { privateKeyPem: client.keyPem, certificateChainPem: client.certPem + trusted.certPem };

describe("AdnHttpClient TLS", () => {
  it("presents the municipality's certificate and reuses one pool (and TLS context) for every call", async () => {
    const http = new AdnHttpClient({ extraCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    const pool = http.pool("3550308", "v1", creds);
    expect(http.pool("3550308", "v1", creds)).toBe(pool);
    for (let i = 0; i < 3; i++) {
      const res = await http.get(pool, `${base}/x`, { timeoutMs: 5000 });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.toString()).subject).toBe("EMPRESA TESTE LTDA:11222333000181");
    }
    await http.close();
  });

  it("refuses a server whose certificate no trusted CA issued", async () => {
    const http = new AdnHttpClient({ extraCa: Buffer.from(stranger.certPem), maxResponseBytes: 1 << 20 });
    const err = await http.get(http.pool("3550308", "v1", creds), `${base}/x`, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdnHttpFailure);
    expect((err as AdnHttpFailure).kind).toBe("network");
    await http.close();
  });
});
