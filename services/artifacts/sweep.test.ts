// Retention on a controlled clock: no waiting for real expiry, several sweepers at once like replicas.
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../libs/config/paths.js";
import { migrate } from "../../libs/db/migrate.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { ArtifactMetadataStore, isExpired } from "./metadata.js";
import { newArtifactId } from "./put.js";
import { DiskBlobStore } from "./storage/disk.js";
import { sweepOnce, sweepOrphans } from "./sweep.js";

let db: ThrowawayDatabase;
let dir: string;
let blobs: DiskBlobStore;
let meta: ArtifactMetadataStore;
const T0 = new Date("2026-01-10T12:00:00.000Z");

beforeAll(async () => {
  db = await createThrowawayDatabase();
  await migrate(db.pool, join(projectRoot(), "migrations"));
  dir = mkdtempSync(join(tmpdir(), "malha-sweep-"));
  blobs = await DiskBlobStore.open(dir);
  meta = new ArtifactMetadataStore(db.pool);
});
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function stored(name: string, expiresAt: Date) {
  const id = newArtifactId();
  const w = await blobs.begin();
  await w.write(Buffer.from(name));
  await w.commit(`sw/${id}`);
  const record = {
    id,
    tenant: "sw",
    jobId: "job",
    name,
    contentType: "text/plain",
    sizeBytes: BigInt(name.length),
    sha256: "0".repeat(64),
    storageKey: `sw/${id}`,
    createdAt: T0,
    expiresAt,
    sweptAt: null,
  };
  expect(await meta.insert(record)).toBe("inserted");
  return record;
}

describe("retention sweep", () => {
  it("deletes expired content once across concurrent sweepers, keeps rows for audit, spares the living", async () => {
    const dueAt = new Date(T0.getTime() + 60_000);
    const expired = await Promise.all(Array.from({ length: 7 }, (_, i) => stored(`old-${i}`, dueAt)));
    const living = await stored("young", new Date(T0.getTime() + 3_600_000));
    const now = () => new Date(dueAt.getTime() + 1);
    // Three "replicas" with a tiny batch so that their rounds interleave.
    const results = await Promise.all([1, 2, 3].map(() => sweepOnce({ meta, blobs, staleTempMs: 3_600_000, batchSize: 2, now })));
    expect(results.reduce((n, r) => n + r.swept, 0)).toBe(7);
    for (const r of expired) {
      expect(existsSync(join(dir, "blobs", r.storageKey))).toBe(false);
      const row = await meta.get("sw", r.id);
      expect(row?.sweptAt).toEqual(now());
      expect(isExpired(row!, T0)).toBe(true); // swept means expired, whatever the clock
    }
    expect(existsSync(join(dir, "blobs", living.storageKey))).toBe(true);
    expect((await meta.get("sw", living.id))?.sweptAt).toBeNull();
    expect((await sweepOnce({ meta, blobs, staleTempMs: 3_600_000, now })).swept).toBe(0);

    // Listing hides swept rows unless asked, even with a clock that says they are still young.
    const visible = await meta.list({ tenant: "sw", jobId: "", includeExpired: false, now: T0, limit: 100 });
    expect(visible.map((r) => r.id)).toEqual([living.id]);
    expect(await meta.list({ tenant: "sw", jobId: "job", includeExpired: true, now: T0, limit: 100 })).toHaveLength(8);
  });

  it("marks a row whose content was already gone (a crash between delete and mark)", async () => {
    const r = await stored("half-swept", new Date(T0.getTime() + 1000));
    await blobs.delete(r.storageKey);
    expect((await sweepOnce({ meta, blobs, staleTempMs: 3_600_000, now: () => new Date(T0.getTime() + 2000) })).swept).toBe(1);
    expect((await meta.get("sw", r.id))?.sweptAt).not.toBeNull();
  });

  it("removes stale temp files of dead uploads and keeps fresh ones", async () => {
    const dead = await blobs.begin();
    await dead.write(Buffer.from("dead"));
    const live = await blobs.begin();
    await live.write(Buffer.from("live"));
    const [first] = readdirSync(join(dir, "tmp"));
    const old = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(join(dir, "tmp", first!), old, old);
    expect((await sweepOnce({ meta, blobs, staleTempMs: 3_600_000 })).temps).toBe(1);
    expect(readdirSync(join(dir, "tmp"))).toHaveLength(1);
    await dead.abort();
    await live.abort();
  });

  it("removes old blobs without a row (upload killed between publish and insert), and nothing else", async () => {
    const age = (key: string) => {
      const old = new Date(Date.now() - 2 * 3_600_000);
      utimesSync(join(dir, "blobs", key), old, old);
    };
    const kept = await stored("has-a-row", new Date(T0.getTime() + 3_600_000));
    age(kept.storageKey);
    const orphanKey = `sw/${newArtifactId()}`;
    const fresh = `sw/${newArtifactId()}`;
    for (const key of [orphanKey, fresh]) {
      const w = await blobs.begin();
      await w.write(Buffer.from("no row"));
      await w.commit(key);
    }
    age(orphanKey);
    // Not an id we issue: left alone whatever its age.
    writeFileSync(join(dir, "blobs", "sw", "README"), "operator's note");
    age("sw/README");

    expect(await sweepOrphans({ meta, blobs, staleTempMs: 3_600_000, batchSize: 2 })).toBe(1);
    expect(existsSync(join(dir, "blobs", orphanKey))).toBe(false);
    expect(existsSync(join(dir, "blobs", fresh))).toBe(true);
    expect(existsSync(join(dir, "blobs", kept.storageKey))).toBe(true);
    expect(existsSync(join(dir, "blobs", "sw", "README"))).toBe(true);
    expect((await sweepOnce({ meta, blobs, staleTempMs: 3_600_000 }, { orphans: true })).orphans).toBe(0);
  });
});
