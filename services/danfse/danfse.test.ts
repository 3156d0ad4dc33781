// The DANFSe service against real services (test/support/danfse-mesh.ts): notes synced from the ADN
// simulator into the store, the artifacts service on disk, danfse processes on real sockets. The PDFs
// are checked only through the rendering contract: their text holds the chave, and every sha256 in an
// export's manifest is the file's.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildChave } from "../../libs/adn/chave.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { type DanfseExport, DanfseExportState, DanfseService } from "../../libs/gen/malha/danfse/v1/danfse_pb.js";
import { EXIT } from "../../cli/exit-codes.js";
import { cliRunner } from "../../cli/testing/run-cli.js";
import { startDanfseMesh, type DanfseMesh } from "../../test/support/danfse-mesh.js";
import { sampleValue, scrape } from "../../test/support/prom-text.js";
import { until } from "../../test/support/sync-checks.js";
import type { ManifestEntry } from "./export-job.js";

const MAX_NOTES = 300;
let mesh: DanfseMesh;
let dir: string;
let a: string; // the municipality the tests read
let b: string; // another one
let notesA: { chave: string; competencia: string }[];
let notesB: { chave: string; competencia: string }[];

beforeAll(async () => {
  mesh = await startDanfseMesh({ municipalities: 2, feedSize: 40, danfseEnv: { DANFSE_EXPORT_MAX_NOTES: String(MAX_NOTES) } });
  dir = mkdtempSync(join(tmpdir(), "malha-danfse-test-"));
  [a, b] = mesh.nfse.municipalities.map((m) => m.ibge) as [string, string];
  notesA = await mesh.notes(a);
  notesB = await mesh.notes(b);
}, 180_000);

afterAll(async () => {
  await mesh?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const pdfText = (bytes: Uint8Array) => {
  const f = join(dir, `t-${sha(bytes).slice(0, 12)}.pdf`);
  writeFileSync(f, bytes);
  return execFileSync("pdftotext", [f, "-"], { encoding: "utf8" });
};

async function danfseOf(ibge: string, chave: string) {
  let header: { chave: string; sizeBytes: bigint; sha256: string } | undefined;
  const chunks: Uint8Array[] = [];
  for await (const res of mesh.client.getDanfse({ ibge, chave })) {
    if (res.part.case === "header") header = res.part.value;
    if (res.part.case === "chunk") chunks.push(res.part.value);
  }
  return { header, pdf: Buffer.concat(chunks) };
}

async function refusal(
  p: Promise<unknown>,
): Promise<{ code: Code; reason: string | undefined; field: string | undefined; message: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const ce = err as ConnectError;
  const info = ce.findDetails(ErrorInfoSchema)[0];
  return { code: ce.code, reason: info?.reason, field: info?.metadata.field, message: ce.rawMessage };
}

async function finished(id: string): Promise<DanfseExport> {
  let e: DanfseExport | undefined;
  await until(
    async () => {
      e = (await mesh.client.getDanfseExport({ exportId: id })).export;
      return e !== undefined && e.state !== DanfseExportState.RUNNING;
    },
    `export ${id} to finish`,
    60_000,
  );
  return e!;
}

/** Downloads the zip through its signed link, checks it against the export, and unpacks it. */
async function downloadZip(e: DanfseExport): Promise<{ dir: string; manifest: { total: number; notes: ManifestEntry[] } }> {
  const res = await fetch(e.zip!.downloadUrl);
  expect(res.status).toBe(200);
  const zip = new Uint8Array(await res.arrayBuffer());
  expect(sha(zip)).toBe(e.zip!.sha256);
  expect(BigInt(zip.length)).toBe(e.zip!.sizeBytes);
  const out = mkdtempSync(join(dir, "zip-"));
  writeFileSync(join(out, "export.zip"), zip);
  execFileSync("unzip", ["-q", join(out, "export.zip"), "-d", join(out, "files")]);
  return { dir: join(out, "files"), manifest: JSON.parse(readFileSync(join(out, "files", "manifest.json"), "utf8")) };
}

describe("GetDanfse", () => {
  it("streams a PDF whose text holds the chave, with its size and sha256 in the header", async () => {
    expect(notesA.length).toBeGreaterThan(5);
    const { chave } = notesA[0]!;
    const { header, pdf } = await danfseOf(a, chave);
    expect(header).toMatchObject({ chave, sizeBytes: BigInt(pdf.length), sha256: sha(pdf) });
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    expect(pdfText(pdf).replace(/\s+/g, "")).toContain(chave);
    // deterministic: the same note again, the same bytes
    expect(sha((await danfseOf(a, chave)).pdf)).toBe(sha(pdf));
  });

  it("answers NOT_FOUND for another municipality's note, an unregistered municipality; INVALID_ARGUMENT naming the field for a bad chave", async () => {
    expect(await refusal(danfseOf(a, notesB[0]!.chave))).toMatchObject({ code: Code.NotFound, reason: "DOCUMENT_NOT_FOUND" });
    expect(await refusal(danfseOf("3106200", notesA[0]!.chave))).toMatchObject({ code: Code.NotFound, reason: "MUNICIPALITY_NOT_FOUND" });
    const badDv = notesA[0]!.chave.slice(0, 49) + String((Number(notesA[0]!.chave[49]) + 1) % 10);
    expect(await refusal(danfseOf(a, badDv))).toMatchObject({ code: Code.InvalidArgument, reason: "INVALID_CHAVE", field: "chave" });
    expect(await refusal(danfseOf("35503O8", notesA[0]!.chave))).toMatchObject({ code: Code.InvalidArgument, reason: "INVALID_IBGE" });
  });
});

describe("DANFSe exports", () => {
  it("exports a competência range as a zip through a signed link: one PDF per note, each sha256 as the manifest says", async () => {
    const days = notesA.map((n) => n.competencia).sort();
    const [from, to] = [days[0]!, days.at(-1)!];
    const d = (s: string) => ({ year: Number(s.slice(0, 4)), month: Number(s.slice(5, 7)), day: Number(s.slice(8, 10)) });
    const created = (await mesh.client.createDanfseExport({ ibge: a, competenciaRange: { start: d(from), end: d(to) } })).export!;
    expect(created).toMatchObject({ state: DanfseExportState.RUNNING, total: notesA.length, ibge: a });
    const e = await finished(created.id);
    expect(e).toMatchObject({ state: DanfseExportState.COMPLETED, total: notesA.length, rendered: notesA.length, failed: 0 });
    const { dir: files, manifest } = await downloadZip(e);
    expect(manifest.notes.map((n) => n.chave).sort()).toEqual(notesA.map((n) => n.chave).sort());
    for (const n of manifest.notes) {
      const pdf = readFileSync(join(files, n.file!));
      expect(sha(pdf)).toBe(n.sha256);
      expect(pdf.length).toBe(n.size_bytes);
    }
    const first = manifest.notes[0]!;
    expect(pdfText(readFileSync(join(files, first.file!))).replace(/\s+/g, "")).toContain(first.chave);
  });

  it("lists a chave the municipality does not hold as a manifest error and renders the others", async () => {
    const chaves = [notesA[1]!.chave, notesB[0]!.chave, notesA[2]!.chave];
    const e = await finished((await mesh.client.createDanfseExport({ ibge: a, chaves })).export!.id);
    expect(e).toMatchObject({ state: DanfseExportState.COMPLETED, total: 3, rendered: 2, failed: 1 });
    const { manifest } = await downloadZip(e);
    expect(manifest.notes.map((n) => [n.chave, n.error?.reason ?? "ok"])).toEqual([
      [chaves[0], "ok"],
      [chaves[1], "DOCUMENT_NOT_FOUND"],
      [chaves[2], "ok"],
    ]);
  });

  it("refuses too many notes (RESOURCE_EXHAUSTED), a bad chave by its index, and a request with both or neither selection", async () => {
    const many = Array.from({ length: MAX_NOTES + 1 }, (_, i) =>
      buildChave({ cMun: a, ambGer: 2, tpInsc: 2, inscricao: "11222333000181", nNFSe: i + 1, year: 2026, month: 11, codigo: 7 }),
    );
    expect(await refusal(mesh.client.createDanfseExport({ ibge: a, chaves: many }))).toMatchObject({
      code: Code.ResourceExhausted,
      reason: "TOO_MANY_NOTES",
    });
    expect(await refusal(mesh.client.createDanfseExport({ ibge: a, chaves: [notesA[0]!.chave, "123"] }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "INVALID_CHAVE",
      field: "chaves[1]",
    });
    expect(await refusal(mesh.client.createDanfseExport({ ibge: a }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "INVALID_RANGE",
    });
    expect(
      await refusal(
        mesh.client.createDanfseExport({
          ibge: a,
          chaves: [notesA[0]!.chave],
          competenciaRange: { start: { year: 2026, month: 1, day: 1 } },
        }),
      ),
    ).toMatchObject({ code: Code.InvalidArgument, reason: "INVALID_RANGE" });
    expect(await refusal(mesh.client.getDanfseExport({ exportId: "dx_nope" }))).toMatchObject({
      code: Code.NotFound,
      reason: "EXPORT_NOT_FOUND",
    });
  });

  it("counts notes by outcome and exports by state in its metrics", async () => {
    const m = await scrape(mesh.danfse.metricsPort);
    expect(sampleValue(m, "malha_danfse_notes_total", { outcome: "ok" })).toBeGreaterThanOrEqual(notesA.length + 2);
    expect(sampleValue(m, "malha_danfse_notes_total", { outcome: "not_found" })).toBeGreaterThanOrEqual(2);
    expect(sampleValue(m, "malha_danfse_exports_total", { state: "completed" })).toBe(2);
  });

  it("an export whose process is killed (-9) ends FAILED INTERRUPTED, seen by another replica, not RUNNING forever", async () => {
    // Slow on purpose: one note at a time, through chaves the store answers NOT_FOUND for.
    const victim = await mesh.startDanfse({ DANFSE_EXPORT_CONCURRENCY: "1" });
    const victimClient = createClient(DanfseService, createGrpcTransport({ baseUrl: victim.baseUrl }));
    const chaves = Array.from({ length: MAX_NOTES }, (_, i) =>
      buildChave({ cMun: a, ambGer: 2, tpInsc: 2, inscricao: "11222333000181", nNFSe: i + 1, year: 2026, month: 11, codigo: 9 }),
    );
    const id = (await victimClient.createDanfseExport({ ibge: a, chaves })).export!.id;
    victim.kill("SIGKILL");
    await victim.exited;
    const e = await finished(id);
    expect(e.state).toBe(DanfseExportState.FAILED);
    expect(e.error).toMatch(/^INTERRUPTED: /);
    expect(e.zip).toBeUndefined();
  });
});

describe("malha documents danfse", () => {
  const malha = cliRunner(
    () => ({ MALHA_DANFSE_URL: mesh.danfse.baseUrl }),
    (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 100))),
  );

  it("writes one note's PDF to --out, and NOT_FOUND (exit 3) for another municipality's chave", async () => {
    const out = join(dir, "nota.pdf");
    const { chave } = notesA[3]!;
    const r = await malha(["documents", "danfse", a, chave, "--out", out]);
    expect(r.code, r.err).toBe(EXIT.OK);
    expect(r.out).toContain(`DANFSe of ${chave}`);
    expect(pdfText(readFileSync(out)).replace(/\s+/g, "")).toContain(chave);
    const missing = await malha(["documents", "danfse", a, notesB[0]!.chave, "--out", join(dir, "x.pdf")]);
    expect(missing.code).toBe(EXIT.NOT_FOUND);
  });

  it("exports --from/--to with progress lines and downloads the zip to --out", async () => {
    const days = notesA.map((n) => n.competencia).sort();
    const out = join(dir, "export.zip");
    const r = await malha(["documents", "danfse", a, "--from", days[0]!, "--to", days.at(-1)!, "--out", out, "--interval", "0.05"]);
    expect(r.code, r.err).toBe(EXIT.OK);
    expect(r.out).toMatch(new RegExp(`export dx_[0-9a-f]+: (RUNNING|COMPLETED) \\d+/${notesA.length}`));
    expect(r.out).toMatch(new RegExp(`${out}: \\d+ bytes, sha256 [0-9a-f]{64} \\(verified\\), ${notesA.length} DANFSe`));
    const listing = execFileSync("unzip", ["-Z1", out], { encoding: "utf8" }).trim().split("\n");
    expect(listing).toHaveLength(notesA.length + 1);
    expect(listing.at(-1)).toBe("manifest.json");
  });
});
