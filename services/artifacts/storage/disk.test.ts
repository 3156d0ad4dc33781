import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlobNotFoundError, UnsafeKeyError } from "./blob-store.js";
import { DiskBlobStore, keySegments } from "./disk.js";

let base: string;
let root: string;
let outside: string;
let store: DiskBlobStore;

beforeEach(async () => {
  base = mkdtempSync(join(tmpdir(), "malha-disk-"));
  root = join(base, "root", "nested");
  outside = join(base, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "secret"), "outside");
  store = await DiskBlobStore.open(root);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

async function readAll(key: string, offset = 0, length?: number, chunk = 4): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of await store.read(key, { offset, ...(length !== undefined ? { length } : {}) }, chunk)) {
    expect(p.byteLength).toBeLessThanOrEqual(chunk);
    parts.push(p);
  }
  return Buffer.concat(parts);
}

async function writeBlob(key: string, content: string): Promise<void> {
  const w = await store.begin();
  await w.write(Buffer.from(content));
  await w.commit(key);
}

describe("disk blob store", () => {
  it("creates the root, publishes atomically, and reads whole blobs and ranges", async () => {
    expect(existsSync(join(root, "blobs"))).toBe(true);
    const w = await store.begin();
    await w.write(Buffer.from("hello "));
    await w.write(Buffer.from("world"));
    // Invisible until committed.
    await expect(store.read("t/a", { offset: 0 }, 4)).rejects.toBeInstanceOf(BlobNotFoundError);
    expect(readdirSync(join(root, "tmp"))).toHaveLength(1);
    await w.commit("t/a");
    expect(readdirSync(join(root, "tmp"))).toEqual([]);
    expect((await readAll("t/a")).toString()).toBe("hello world");
    expect((await readAll("t/a", 6)).toString()).toBe("world");
    expect((await readAll("t/a", 2, 3)).toString()).toBe("llo");
    expect((await readAll("t/a", 11)).toString()).toBe("");
    // Immutable on disk too: read-only mode.
    expect(statSync(join(root, "blobs", "t", "a")).mode & 0o222).toBe(0);
    await w.abort(); // after commit: a no-op, the blob stays
    expect((await readAll("t/a")).toString()).toBe("hello world");
  });

  it("abort discards the temp file and publishes nothing", async () => {
    const w = await store.begin();
    await w.write(Buffer.from("partial"));
    await w.abort();
    await w.abort();
    expect(readdirSync(join(root, "tmp"))).toEqual([]);
    expect(readdirSync(join(root, "blobs"))).toEqual([]);
  });

  it("deletes idempotently", async () => {
    await writeBlob("t/b", "x");
    expect(await store.delete("t/b")).toBe(true);
    expect(await store.delete("t/b")).toBe(false);
    expect(await store.delete("never/there")).toBe(false);
  });

  it.each(["../x", "t/../../x", "/etc/passwd", "t//x", "", "t/.", "..", "%2e%2e/x", "t\\..\\x", "a/b/c/d/e/f/g/h/i"])(
    "refuses the key %j before touching the filesystem",
    async (key) => {
      expect(() => keySegments(key)).toThrow(UnsafeKeyError);
      const w = await store.begin();
      await w.write(Buffer.from("pwned"));
      await expect(w.commit(key)).rejects.toBeInstanceOf(UnsafeKeyError);
      await w.abort();
      await expect(store.read(key, { offset: 0 }, 4)).rejects.toBeInstanceOf(UnsafeKeyError);
      await expect(store.delete(key)).rejects.toBeInstanceOf(UnsafeKeyError);
      expect(readdirSync(join(root, "tmp"))).toEqual([]);
      expect(readdirSync(outside)).toEqual(["secret"]);
    },
  );

  it("never writes through a symlinked directory under the root", async () => {
    symlinkSync(outside, join(root, "blobs", "evil"));
    const w = await store.begin();
    await w.write(Buffer.from("pwned"));
    await expect(w.commit("evil/x")).rejects.toBeInstanceOf(UnsafeKeyError);
    await w.abort();
    expect(readdirSync(outside)).toEqual(["secret"]);
    expect(readdirSync(join(root, "tmp"))).toEqual([]);
    // Reading "through" it is refused too, even for a file that exists over there.
    await expect(store.read("evil/secret", { offset: 0 }, 4)).rejects.toBeInstanceOf(UnsafeKeyError);
    await expect(store.delete("evil/secret")).rejects.toBeInstanceOf(UnsafeKeyError);
    expect(readFileSync(join(outside, "secret"), "utf8")).toBe("outside");
  });

  it("never reads a blob that was replaced by a symlink", async () => {
    await writeBlob("t/c", "mine");
    rmSync(join(root, "blobs", "t", "c"));
    symlinkSync(join(outside, "secret"), join(root, "blobs", "t", "c"));
    await expect(store.read("t/c", { offset: 0 }, 4)).rejects.toBeInstanceOf(UnsafeKeyError);
  });

  it("refuses to open a root whose blobs directory is a symlink", async () => {
    const other = join(base, "other");
    mkdirSync(other);
    symlinkSync(outside, join(other, "blobs"));
    await expect(DiskBlobStore.open(other)).rejects.toBeInstanceOf(UnsafeKeyError);
  });

  it("sweeps only temp files that stopped changing long ago", async () => {
    const live = await store.begin();
    await live.write(Buffer.from("still uploading"));
    const dead = await store.begin();
    await dead.write(Buffer.from("process died"));
    const [a, b] = readdirSync(join(root, "tmp"));
    const old = new Date(Date.now() - 2 * 3600_000);
    // Make exactly one of them old (whichever is the dead writer's does not matter for the store).
    utimesSync(join(root, "tmp", a!), old, old);
    expect(await store.sweepTemps(3600_000)).toBe(1);
    expect(readdirSync(join(root, "tmp"))).toEqual([b]);
    expect(await store.sweepTemps(3600_000)).toBe(0);
    await live.abort();
    await dead.abort();
  });
});
