// Test PKI for the simulator (made at run time, never committed): a test root standing in for
// ICP-Brasil, the simulator's server certificate, and one e-CNPJ A1 per municipality, optionally written
// as the gateway's credentials directory (`<ibge>.pem` = leaf + chain, `<ibge>.key`).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestRoot, issueEcnpj, issueServer, type Issued } from "./icp-brasil.js";
import type { SimMunicipality } from "./server.js";

export interface SimPki {
  root: Issued;
  server: Issued;
  /** e-CNPJ per IBGE code. */
  clients: Map<string, Issued>;
}

export interface ClientSpec extends SimMunicipality {
  /** Issue it already expired (to test the gateway's refusal). */
  expired?: boolean;
  /** A valid e-CNPJ whose CNPJ the simulator does not know (the ADN answers E2001). */
  outsideConvenio?: boolean;
}

export function createSimPki(clients: ClientSpec[], serverNames = ["localhost", "127.0.0.1"]): SimPki {
  const root = createTestRoot();
  const server = issueServer(root, serverNames);
  const issued = new Map<string, Issued>();
  for (const c of clients) {
    const validity = c.expired ? { notBefore: new Date(Date.now() - 400 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) } : {};
    issued.set(c.ibge, issueEcnpj(root, { cnpj: c.cnpj, razaoSocial: `MUNICIPIO ${c.ibge}`, ...validity }));
  }
  return { root, server, clients: issued };
}

/** Writes `ca.pem` and `<ibge>.pem`/`<ibge>.key` for every client; keys are mode 0600. */
export function writeCredentialsDir(dir: string, pki: SimPki): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "ca.pem"), pki.root.certPem);
  for (const [ibge, cert] of pki.clients) {
    writeFileSync(join(dir, `${ibge}.pem`), cert.certPem + pki.root.certPem);
    writeFileSync(join(dir, `${ibge}.key`), cert.keyPem, { mode: 0o600 });
  }
}
