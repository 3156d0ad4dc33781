import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import forge from "node-forge";

export interface MeshTlsFiles {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate from a CA the server does not trust. */
  strangerCert: string;
  strangerKey: string;
}

interface Issued {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.KeyPair;
}

function issue(cn: string, issuer: Issued | undefined, opts: { ca?: boolean; server?: boolean }): Issued {
  const key = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.publicKey;
  cert.serialNumber = forge.util.bytesToHex(forge.random.getBytesSync(8)).replace(/^[89a-f]/, "1");
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const subject = [{ name: "commonName", value: cn }];
  cert.setSubject(subject);
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : subject);
  const extensions: object[] = [{ name: "basicConstraints", cA: Boolean(opts.ca) }];
  if (opts.ca) extensions.push({ name: "keyUsage", keyCertSign: true, cRLSign: true });
  else {
    extensions.push({ name: "keyUsage", digitalSignature: true, keyEncipherment: true });
    extensions.push({ name: "extKeyUsage", serverAuth: Boolean(opts.server), clientAuth: !opts.server });
  }
  if (opts.server) {
    extensions.push({
      name: "subjectAltName",
      altNames: [
        { type: 2, value: "localhost" },
        { type: 7, ip: "127.0.0.1" },
      ],
    });
  }
  cert.setExtensions(extensions);
  cert.sign((issuer ?? { key }).key.privateKey, forge.md.sha256.create());
  return { cert, key };
}

/** A throwaway mesh PKI in a temp dir (never committed): CA, server, client, and an untrusted client. */
export function createMeshTls(): MeshTlsFiles {
  const dir = mkdtempSync(join(tmpdir(), "malha-tls-"));
  const ca = issue("malha test CA", undefined, { ca: true });
  const server = issue("localhost", ca, { server: true });
  const client = issue("adn-gateway", ca, {});
  const strangerCa = issue("stranger CA", undefined, { ca: true });
  const stranger = issue("stranger", strangerCa, {});
  const write = (name: string, pem: string) => {
    const path = join(dir, name);
    writeFileSync(path, pem, { mode: 0o600 });
    return path;
  };
  const pem = (i: Issued) => forge.pki.certificateToPem(i.cert);
  const keyPem = (i: Issued) => forge.pki.privateKeyToPem(i.key.privateKey);
  return {
    dir,
    caCert: write("ca.pem", pem(ca)),
    serverCert: write("server.pem", pem(server)),
    serverKey: write("server.key", keyPem(server)),
    clientCert: write("client.pem", pem(client)),
    clientKey: write("client.key", keyPem(client)),
    strangerCert: write("stranger.pem", pem(stranger)),
    strangerKey: write("stranger.key", keyPem(stranger)),
  };
}
