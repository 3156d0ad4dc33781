// ADN simulator CLI, for the local quickstart and benchmarks:
//
//   npx tsx tools/adn-sim/main.ts [--port 14443] [--admin-port 14480] [--seed 1] [--feed-size 500]
//       [--page-size 50] [--start exclusive|inclusive] [--ambiente HOMOLOGACAO|PRODUCAO]
//       [--latency-ms 0] [--municipios 3550308,3304557:11222333000181] [--certs-dir /tmp/malha-adn-sim]
//
// Each flag also reads from the environment (ADN_SIM_PORT, ADN_SIM_ADMIN_PORT, ADN_SIM_SEED, …,
// ADN_SIM_CERTS_DIR); flags win. A fresh test PKI is made at every start and written to the certs
// directory: `ca.pem` and one `<ibge>.pem`/`<ibge>.key` e-CNPJ per municipality, exactly what the
// gateway's ADN_CREDENTIALS_DIR and ADN_CA_FILE expect. Prints the URLs and the gateway settings, then a
// JSON line `{"url","adminUrl","certsDir"}` for scripts.
import { parseArgs } from "node:util";
import { join } from "node:path";
import { completeCnpj } from "../../libs/tax-id/index.js";
import { createSimPki, writeCredentialsDir } from "./pki.js";
import { startAdnSimulator, type SimMunicipality } from "./server.js";

const { values } = parseArgs({
  options: {
    host: { type: "string" },
    port: { type: "string" },
    "admin-port": { type: "string" },
    seed: { type: "string" },
    "feed-size": { type: "string" },
    "page-size": { type: "string" },
    start: { type: "string" },
    ambiente: { type: "string" },
    "latency-ms": { type: "string" },
    municipios: { type: "string" },
    "certs-dir": { type: "string" },
  },
});

function setting(flag: keyof typeof values, variable: string, fallback: string): string {
  return (values[flag] as string | undefined) ?? process.env[variable] ?? fallback;
}

function int(flag: keyof typeof values, variable: string, fallback: number): number {
  const text = setting(flag, variable, String(fallback));
  if (!/^\d+$/.test(text)) fail(`--${flag} / ${variable} must be a non-negative integer`);
  return Number(text);
}

function fail(message: string): never {
  process.stderr.write(`adn-sim: ${message}\n`);
  process.exit(78);
}

const municipalities: SimMunicipality[] = setting("municipios", "ADN_SIM_MUNICIPIOS", "3550308,3304557")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean)
  .map((spec) => {
    const [ibge = "", cnpj] = spec.split(":");
    if (!/^\d{7}$/.test(ibge) || (cnpj !== undefined && !/^\d{14}$/.test(cnpj))) fail(`bad municipio "${spec}" (ibge or ibge:cnpj)`);
    // A valid CNPJ derived from the IBGE code, so the same municipality always gets the same one.
    return { ibge, cnpj: cnpj ?? completeCnpj(`${ibge}00001`) };
  });
const start = setting("start", "ADN_SIM_START", "exclusive");
if (start !== "exclusive" && start !== "inclusive") fail("--start must be exclusive or inclusive");
const ambiente = setting("ambiente", "ADN_SIM_AMBIENTE", "HOMOLOGACAO").toUpperCase();
if (ambiente !== "HOMOLOGACAO" && ambiente !== "PRODUCAO") fail("--ambiente must be HOMOLOGACAO or PRODUCAO");
const certsDir = setting("certs-dir", "ADN_SIM_CERTS_DIR", "/tmp/malha-adn-sim");

const pki = createSimPki(municipalities);
writeCredentialsDir(certsDir, pki);
const sim = await startAdnSimulator({
  serverCertPem: pki.server.certPem,
  serverKeyPem: pki.server.keyPem,
  clientCaPem: pki.root.certPem,
  municipalities,
  seed: int("seed", "ADN_SIM_SEED", 1),
  feedSize: int("feed-size", "ADN_SIM_FEED_SIZE", 500),
  host: setting("host", "ADN_SIM_HOST", "127.0.0.1"),
  port: int("port", "ADN_SIM_PORT", 14443),
  adminPort: int("admin-port", "ADN_SIM_ADMIN_PORT", 14480),
  switches: {
    pageSize: int("page-size", "ADN_SIM_PAGE_SIZE", 50),
    startInclusive: start === "inclusive",
    tipoAmbiente: ambiente,
    latencyMs: int("latency-ms", "ADN_SIM_LATENCY_MS", 0),
  },
});

const envName = ambiente === "PRODUCAO" ? "ADN_BASE_URL_PRODUCAO" : "ADN_BASE_URL_PRODUCAO_RESTRITA";
process.stdout.write(
  [
    `adn-sim: ADN at ${sim.url} (/municipios, /contribuintes) for ${municipalities.map((m) => `${m.ibge}=${m.cnpj}`).join(", ")}`,
    `adn-sim: admin at ${sim.adminUrl} (GET counters, GET|POST switches, POST reset, POST append)`,
    `adn-sim: gateway env: ${envName}=${sim.url} ADN_CA_FILE=${join(certsDir, "ca.pem")} ADN_CREDENTIALS_DIR=${certsDir}`,
    JSON.stringify({ url: sim.url, adminUrl: sim.adminUrl, certsDir }),
    "",
  ].join("\n"),
);

const stop = () => {
  void sim.close().then(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
