// The quickstart's demo (scripts/dev.sh up): registers a few municipalities, imports the simulator's
// test e-CNPJ certificates into the vault (as PFX, like an operator would), asks the coordinator to
// sync them, and prints progress until every feed has caught up.
//   tsx scripts/demo.ts <certs dir> <ibge,ibge,...>
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import forge from "node-forge";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { CoordinatorService, FeedState } from "../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { Ambiente, TipoNsu } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome } from "../libs/gen/malha/store/v1/types_pb.js";
import { VaultService } from "../libs/gen/malha/vault/v1/vault_pb.js";
import { vaultAdminCall } from "./cli/vault-admin.js";
import { MESH, type MeshServiceName } from "../libs/rpc/mesh.js";

const NAMES: Record<string, { name: string; uf: string }> = {
  "3550308": { name: "São Paulo", uf: "SP" },
  "3304557": { name: "Rio de Janeiro", uf: "RJ" },
  "4106902": { name: "Curitiba", uf: "PR" },
  "5300108": { name: "Brasília", uf: "DF" },
  "2304400": { name: "Fortaleza", uf: "CE" },
};

const [certsDir, list] = process.argv.slice(2);
if (!certsDir || !list) {
  process.stderr.write("usage: tsx scripts/demo.ts <certs dir> <ibge,ibge,...>\n");
  process.exit(2);
}
const dir: string = certsDir;
const ibges = list.split(",").filter((i) => NAMES[i]);
const client = <S extends Parameters<typeof createClient>[0]>(service: S, name: MeshServiceName) =>
  createClient(service, createGrpcTransport({ baseUrl: process.env[`MALHA_${name.toUpperCase().replace("-", "_")}_URL`] ?? `http://127.0.0.1:${MESH[name].port}` }));
const vault = client(VaultService, "vault");
const store = client(StoreService, "store");
const coordinator = client(CoordinatorService, "coordinator");

/** The simulator writes PEM; operators hand the vault a PFX and its password, so the demo does too. */
function pfxOf(ibge: string): { pfx: Uint8Array; password: string } {
  const certs = readFileSync(join(dir, `${ibge}.pem`), "utf8")
    .split(/(?=-----BEGIN CERTIFICATE-----)/)
    .filter((p) => p.includes("BEGIN CERTIFICATE"))
    .map((p) => forge.pki.certificateFromPem(p));
  const key = forge.pki.privateKeyFromPem(readFileSync(join(dir, `${ibge}.key`), "utf8"));
  const password = randomBytes(12).toString("base64url");
  const der = forge.asn1.toDer(forge.pkcs12.toPkcs12Asn1(key, certs, password, { algorithm: "3des" })).getBytes();
  return { pfx: Buffer.from(der, "binary"), password };
}

for (const ibge of ibges) {
  const { name, uf } = NAMES[ibge]!;
  await store.registerMunicipality({
    ibge,
    name,
    uf,
    active: true,
    feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
  });
  const { pfx, password } = pfxOf(ibge);
  const imported = await vault.importCertificate({ ibge, pfx, password, requestedBy: "demo" }, vaultAdminCall(process.env));
  console.log(`demo: ${ibge} ${name}/${uf} registered; certificate ${imported.certificate?.cnpj} imported`);
  const { decisions } = await coordinator.syncNow({ ibge, requestedBy: "demo" });
  for (const d of decisions) console.log(`demo: ${ibge} sync ${d.accepted ? "started" : `skipped (reason ${d.reason})`}`);
}

const deadline = Date.now() + 300_000;
for (;;) {
  const { statuses } = await coordinator.listFeedStatus({});
  const mine = statuses.filter((s) => ibges.includes(s.feed?.ibge ?? ""));
  console.log(
    "demo: " +
      mine
        .map((s) => `${s.feed?.ibge} ${FeedState[s.state]} cursor ${s.cursor} docs ${s.documentsCount} events ${s.eventsCount}`)
        .join(" | "),
  );
  if (mine.length === ibges.length && mine.every((s) => s.lastOutcome === RunOutcome.CAUGHT_UP)) break;
  if (Date.now() > deadline) {
    console.error("demo: not every feed caught up within 5 minutes; see the coordinator's log");
    process.exit(1);
  }
  await new Promise((r) => setTimeout(r, 1000));
}
console.log("demo: every demo municipality is synced");
