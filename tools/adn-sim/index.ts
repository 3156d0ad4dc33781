// The ADN simulator as a library for tests and benchmarks of other services: one call gives a running
// simulator, its PKI, a credentials directory and the env that points an adn-gateway at it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSimPki, writeCredentialsDir, type ClientSpec, type SimPki } from "./pki.js";
import { startAdnSimulator, type AdnSimulator, type AdnSimulatorOptions } from "./server.js";

export { startAdnSimulator, type AdnSimulator, type AdnSimulatorOptions, type SimMunicipality } from "./server.js";
export { createSimPki, writeCredentialsDir, type ClientSpec, type SimPki } from "./pki.js";
export type { SimSwitches, ItemFault } from "./switches.js";
export type { SimCounters } from "./counters.js";
export type { FeedEntry, NoteFacts, EventFacts } from "./model.js";
export { compact, expectedDocumentJson, expectedEventJson } from "./expected.js";

export interface TestAdn {
  sim: AdnSimulator;
  pki: SimPki;
  /** `ca.pem` and `<ibge>.pem`/`<ibge>.key` per municipality. */
  credentialsDir: string;
  /** Env for an adn-gateway process: both ambientes point at the simulator, credentials from the directory. */
  gatewayEnv: Record<string, string>;
  close(): Promise<void>;
}

/** PKI + simulator + credentials directory, with one e-CNPJ per client (see ClientSpec for the odd ones). */
export async function startTestAdn(
  clients: ClientSpec[],
  opts: Omit<AdnSimulatorOptions, "serverCertPem" | "serverKeyPem" | "clientCaPem" | "municipalities"> = {},
): Promise<TestAdn> {
  const pki = createSimPki(clients);
  const credentialsDir = mkdtempSync(join(tmpdir(), "malha-adn-creds-"));
  writeCredentialsDir(credentialsDir, pki);
  const sim = await startAdnSimulator({
    ...opts,
    serverCertPem: pki.server.certPem,
    serverKeyPem: pki.server.keyPem,
    clientCaPem: pki.root.certPem,
    municipalities: clients.filter((c) => !c.outsideConvenio).map(({ ibge, cnpj }) => ({ ibge, cnpj })),
  });
  return {
    sim,
    pki,
    credentialsDir,
    gatewayEnv: {
      ADN_CREDENTIALS_DIR: credentialsDir,
      ADN_CA_FILE: join(credentialsDir, "ca.pem"),
      ADN_BASE_URL_PRODUCAO: sim.url,
      ADN_BASE_URL_PRODUCAO_RESTRITA: sim.url,
    },
    async close() {
      await sim.close();
      rmSync(credentialsDir, { recursive: true, force: true });
    },
  };
}
