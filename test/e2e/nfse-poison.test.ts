// A poison document of each kind ends in quarantine, with its reason and its raw bytes, while its feed
// catches up: every other NSU is stored once and the cursor passes the poison (simulator → gateway →
// coordinator → store → MariaDB, each its own process).
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ItemFault } from "../../tools/adn-sim/switches.js";
import { startNfseMesh, type NfseMesh } from "../support/nfse-mesh.js";
import { storedNsus, until } from "../support/sync-checks.js";

const POISONS: [ItemFault, string, RegExp][] = [
  ["poison-long-description", "INVALID_VALUE", /xDescServ is longer than 2000 characters/],
  ["poison-huge-rate", "INVALID_VALUE", /valores\/pAliqAplic is not a rate/],
  ["poison-lowercase-cnpj", "INVALID_VALUE", /CNPJ has lower-case letters/],
  ["poison-long-name", "INVALID_VALUE", /xNome is longer than 300 characters/],
  ["poison-bad-ibscbs", "INVALID_VALUE", /IBSCBS\/totCIBS\/vTotNF is not an amount/],
  ["truncated-gzip", "BAD_GZIP", /gzip/],
  ["malformed-xml", "BAD_XML", /not closed|does not match/],
  ["dtd", "BAD_XML", /DTD/],
];

describe("poison documents", () => {
  let mesh: NfseMesh;
  beforeAll(async () => {
    // The gateway trusts the simulator through NODE_EXTRA_CA_CERTS here, as a deployment adds a CA (the
    // other end-to-end tests use ADN_CA_FILE): the feed catching up is that path working.
    mesh = await startNfseMesh({ municipalities: 1, feedSize: 240, coordinators: 1, simulatorCa: "extra-ca-certs" });
  }, 120_000);
  afterAll(async () => {
    await mesh?.stop();
  });

  it("quarantines one of each kind with its reason while the feed catches up and stores everything else once", async () => {
    const m = mesh.municipalities[0]!;
    const feed = mesh.sim.feed(m.ibge, "DISTRIBUICAO");
    // Visible notes spread over several batches (pages of 50), so that a poison sits among good items.
    const notes = feed.entries.filter((e) => e.facts.kind === "NFSE" && !e.hidden);
    const targets = POISONS.map(([fault], i) => ({ fault, entry: notes[5 + i * 12]! }));
    mesh.sim.configure({ faultsByNsu: Object.fromEntries(targets.map((t) => [String(t.entry.nsu), t.fault])) });
    await mesh.registerAll();

    await until(async () => {
      const { states } = await mesh.storeClient.listSyncStates({ pageSize: 10 });
      return states.length === 1 && states[0]!.lastSuccessAt !== undefined;
    }, "the feed to catch up past its poison documents");
    const { states } = await mesh.storeClient.listSyncStates({ pageSize: 10 });
    const visibleLast = feed.entries.filter((e) => !e.hidden).at(-1)!.nsu;
    expect(states[0]!.lastNsu).toBeGreaterThanOrEqual(visibleLast);

    const [rows] = await mesh.db.pool.query<RowDataPacket[]>(
      "SELECT nsu, reason, message, payload IS NOT NULL AS has_payload, xml IS NOT NULL AS has_xml FROM nfse_quarantine WHERE ibge = ? ORDER BY nsu",
      [m.ibge],
    );
    expect(rows.map((r) => BigInt(r.nsu))).toEqual(targets.map((t) => t.entry.nsu));
    for (const [i, [fault, reason, message]] of POISONS.entries()) {
      const row = rows[i]!;
      expect(row.reason, fault).toBe(reason);
      expect(row.message, fault).toMatch(message);
      // Nothing is lost: the raw payload where decoding failed, the decompressed XML where parsing did.
      expect(Number(row.has_payload) + Number(row.has_xml), fault).toBeGreaterThan(0);
    }
    const stored = await storedNsus(mesh, m.ibge);
    expect(new Set(stored).size).toBe(stored.length);
    const visible = feed.entries.filter((e) => !e.hidden).map((e) => e.nsu);
    for (const nsu of visible) expect(stored).toContain(nsu);
    // No run failed on them.
    const { runs } = await mesh.storeClient.listRuns({ ibge: m.ibge, pageSize: 50 });
    expect(runs.every((r) => r.errorMessage === "")).toBe(true);
  });
});
