// ComposeZip without the network: real disk, real MariaDB. The zip must be byte-identical to the
// in-memory writer's for the same entries (so a finalize repeated after a crash, or one that ran
// before ComposeZip existed, names the same artifact), pass the system unzip, and refuse what it
// cannot honour with the right code, naming the entry.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../libs/config/paths.js";
import { migrate } from "../../libs/db/migrate.js";
import {
  ComposeZipRequestSchema,
  PutArtifactRequestSchema,
  type PutArtifactRequest,
} from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { composeZip } from "./compose-zip.js";
import { ArtifactMetadataStore } from "./metadata.js";
import { putArtifact, type PutDeps } from "./put.js";
import { DiskBlobStore } from "./storage/disk.js";
import { buildZip } from "../../libs/zip/index.js";

let db: ThrowawayDatabase;
let dir: string;
let deps: PutDeps;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  await migrate(db.pool, join(projectRoot(), "migrations"));
  dir = mkdtempSync(join(tmpdir(), "malha-zip-"));
  deps = { blobs: await DiskBlobStore.open(dir), meta: new ArtifactMetadataStore(db.pool), maxBytes: 4 << 20, defaultTtlMs: 86_400_000 };
});
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function* parts(tenant: string, name: string, data: Buffer, expiresAt?: Date): AsyncIterable<PutArtifactRequest> {
  const expiry = expiresAt ? { case: "expiresAt" as const, value: timestampFromDate(expiresAt) } : { case: undefined };
  yield create(PutArtifactRequestSchema, {
    part: { case: "header", value: { tenant, name, jobId: "j1", contentType: "application/pdf", expiry } },
  });
  for (let o = 0; o < data.length; o += 100_000)
    yield create(PutArtifactRequestSchema, { part: { case: "chunk", value: data.subarray(o, o + 100_000) } });
}

const put = async (tenant: string, name: string, data: Buffer, expiresAt?: Date) =>
  (await putArtifact(deps, parts(tenant, name, data, expiresAt))).record;
const req = (init: MessageInitShape<typeof ComposeZipRequestSchema>) => create(ComposeZipRequestSchema, init);

async function readBlob(key: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const c of await deps.blobs.read(key, { offset: 0 }, 64 * 1024)) chunks.push(c);
  return Buffer.concat(chunks);
}

async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => ConnectError.from(err),
  );
  if (!e) throw new Error("expected a refusal");
  return e;
}

describe("ComposeZip", () => {
  it("stores the same bytes as the in-memory writer, in order, with its sha256; again → the same artifact", async () => {
    // Larger than one read chunk, so entries stream in several pieces.
    const a = randomBytes(600_000);
    const b = Buffer.from("%PDF-1.3 small\n");
    const manifest = Buffer.from(JSON.stringify({ ok: "ção" }));
    const ra = await put("t", "items/a.pdf", a);
    const rb = await put("t", "items/b.pdf", b);
    const request = req({
      tenant: "t",
      jobId: "j1",
      name: "boletos-j1.zip",
      entries: [
        { name: "items/a.pdf", source: { case: "artifactId", value: ra.id } },
        { name: "items/b.pdf", source: { case: "artifactId", value: rb.id } },
        { name: "manifest.json", source: { case: "inline", value: manifest } },
      ],
    });
    const first = await composeZip(deps, request);
    expect(first.created).toBe(true);
    const expected = buildZip([
      { name: "items/a.pdf", data: a },
      { name: "items/b.pdf", data: b },
      { name: "manifest.json", data: manifest },
    ]);
    const stored = await readBlob(first.record.storageKey);
    expect(Buffer.compare(stored, expected)).toBe(0);
    expect(first.record.sha256).toBe(createHash("sha256").update(expected).digest("hex"));
    expect(first.record.sizeBytes).toBe(BigInt(expected.length));
    expect(first.record.contentType).toBe("application/zip");
    const zipFile = join(dir, "check.zip");
    writeFileSync(zipFile, stored);
    execFileSync("unzip", ["-tq", zipFile]);
    expect(execFileSync("unzip", ["-Z1", zipFile], { encoding: "utf8" }).trim().split("\n")).toEqual([
      "items/a.pdf",
      "items/b.pdf",
      "manifest.json",
    ]);
    execFileSync("unzip", ["-q", zipFile, "-d", join(dir, "out")]);
    expect(Buffer.compare(readFileSync(join(dir, "out", "items/a.pdf")), a)).toBe(0);

    const again = await composeZip(deps, request);
    expect(again.created).toBe(false);
    expect(again.record.id).toBe(first.record.id);
  });

  it("refuses what it cannot honour, naming the entry, and stores nothing", async () => {
    const r = await put("t", "items/c.pdf", Buffer.from("c"));
    const other = await put("u", "items/c.pdf", Buffer.from("c"));
    const expired = await put("t", "items/old.pdf", Buffer.from("old"), new Date(Date.now() + 1500));
    const base = { tenant: "t", jobId: "j2", name: "z.zip" } as const;
    const entry = (name: string, id: string) => ({ name, source: { case: "artifactId" as const, value: id } });

    expect((await refusal(composeZip(deps, req({ ...base, entries: [] })))).code).toBe(Code.InvalidArgument);
    const dup = await refusal(composeZip(deps, req({ ...base, entries: [entry("x.pdf", r.id), entry("x.pdf", r.id)] })));
    expect(dup.code).toBe(Code.InvalidArgument);
    expect(dup.rawMessage).toContain("entries[1].name");
    const bad = await refusal(composeZip(deps, req({ ...base, entries: [entry("../x.pdf", r.id)] })));
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toContain("entries[0].name");
    const empty = await refusal(composeZip(deps, req({ ...base, entries: [{ name: "x.pdf" }] })));
    expect(empty.rawMessage).toContain("entries[0] has neither artifact_id nor inline content");
    // Another tenant's artifact is as missing as one that never existed.
    expect((await refusal(composeZip(deps, req({ ...base, entries: [entry("x.pdf", other.id)] })))).code).toBe(Code.NotFound);
    expect((await refusal(composeZip(deps, req({ ...base, entries: [entry("x.pdf", "art_nope")] })))).code).toBe(Code.NotFound);
    const big = { name: "big.bin", source: { case: "inline" as const, value: new Uint8Array(4 * 1024 * 1024 + 1) } };
    expect((await refusal(composeZip(deps, req({ ...base, entries: [big] })))).code).toBe(Code.InvalidArgument);
    await new Promise((res) => setTimeout(res, Math.max(0, expired.expiresAt.getTime() - Date.now()) + 50));
    const late = await refusal(composeZip(deps, req({ ...base, entries: [entry("old.pdf", expired.id)] })));
    expect(late.code).toBe(Code.FailedPrecondition);
    expect(await deps.meta.findByName("t", "j2", "z.zip")).toBeUndefined();
  });
});
