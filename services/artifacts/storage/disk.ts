// Disk backend: ROOT/tmp/<random>.part while uploading, ROOT/blobs/<key> once committed. Same filesystem,
// so the publishing rename is atomic; the file is fsynced before and its directory after, so a crash
// leaves either the whole blob or none (plus a temp file the sweep removes).
//
// Containment: keys are built by the service from validated segments, and checked again here; every
// directory on the way to a blob must resolve (realpath) to exactly where it should be, and the blob itself
// is opened with O_NOFOLLOW, so a symlink planted anywhere under the root leads nowhere.
import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { lstat, mkdir, open, readdir, realpath, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { join, sep } from "node:path";
import { DirSyncer } from "./dir-sync.js";
import { BlobNotFoundError, StorageFullError, UnsafeKeyError, type BlobStore, type BlobWriter, type ReadRange } from "./blob-store.js";

const KEY_SEGMENT = /^[A-Za-z0-9._-]{1,128}$/;
const MAX_KEY_SEGMENTS = 8;

/** The key as path segments, or UnsafeKeyError: no empty, dot-only, encoded or absolute parts. */
export function keySegments(key: string): string[] {
  const segments = key.split("/");
  if (segments.length > MAX_KEY_SEGMENTS) throw new UnsafeKeyError("storage key has too many segments");
  for (const s of segments) {
    if (!KEY_SEGMENT.test(s) || /^\.+$/.test(s)) throw new UnsafeKeyError(`unsafe storage key ${JSON.stringify(key.slice(0, 80))}`);
  }
  return segments;
}

function isFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOSPC" || code === "EDQUOT";
}

async function fsyncDir(path: string): Promise<void> {
  const fh = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export class DiskBlobStore implements BlobStore {
  private readonly dirSyncs = new DirSyncer(fsyncDir);

  private constructor(
    /** realpath of the root: what every resolved directory is compared against. */
    readonly root: string,
  ) {}

  /** Creates ROOT, ROOT/blobs and ROOT/tmp if missing. */
  static async open(root: string): Promise<DiskBlobStore> {
    await mkdir(join(root, "blobs"), { recursive: true, mode: 0o750 });
    await mkdir(join(root, "tmp"), { recursive: true, mode: 0o750 });
    const real = await realpath(root);
    const store = new DiskBlobStore(real);
    // The root itself may be a symlink (a mounted volume); its two children may not.
    await store.checkDir(join(real, "blobs"), join(real, "blobs"));
    await store.checkDir(join(real, "tmp"), join(real, "tmp"));
    return store;
  }

  get blobsDir(): string {
    return join(this.root, "blobs");
  }

  get tmpDir(): string {
    return join(this.root, "tmp");
  }

  /** The path of a key, with every directory on the way verified to resolve inside the root. */
  private async pathOf(key: string, create: boolean): Promise<string> {
    const segments = keySegments(key);
    const file = segments.pop()!;
    const dir = join(this.blobsDir, ...segments);
    if (create) {
      const created = await mkdir(dir, { recursive: true, mode: 0o750 });
      // A new directory entry is only durable once its parent is synced.
      if (created !== undefined) await this.dirSyncs.sync(this.blobsDir);
    }
    await this.checkDir(dir, dir);
    return join(dir, file);
  }

  private async checkDir(path: string, expected: string): Promise<void> {
    let real: string;
    try {
      real = await realpath(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new BlobNotFoundError("no such blob");
      throw err;
    }
    if (real !== expected || !(real + sep).startsWith(this.root + sep)) {
      throw new UnsafeKeyError("a storage directory resolves outside its place under the root (symlink?)");
    }
  }

  async begin(): Promise<BlobWriter> {
    const tmp = join(this.tmpDir, `${randomBytes(16).toString("hex")}.part`);
    let fh: FileHandle;
    try {
      fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (err) {
      if (isFull(err)) throw new StorageFullError("no space for a new upload");
      throw err;
    }
    return new DiskWriter(this, fh, tmp);
  }

  /** Used by DiskWriter.commit. */
  async publish(tmp: string, key: string): Promise<void> {
    const path = await this.pathOf(key, true);
    await rename(tmp, path);
    await this.dirSyncs.sync(join(path, ".."));
  }

  async read(key: string, range: ReadRange, chunkBytes: number): Promise<AsyncIterable<Uint8Array>> {
    const path = await this.pathOf(key, false);
    // Checked now so that a missing blob fails the call before anything was sent; the file is opened
    // only when reading starts, so an iterator that is dropped unread holds no descriptor.
    let info: Stats;
    try {
      info = await lstat(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new BlobNotFoundError("no such blob");
      throw err;
    }
    if (info.isSymbolicLink()) throw new UnsafeKeyError("the blob is a symlink");
    if (!info.isFile()) throw new UnsafeKeyError("the blob is not a regular file");
    return (async function* () {
      let fh: FileHandle;
      try {
        fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT") throw new BlobNotFoundError("no such blob");
        if (code === "ELOOP") throw new UnsafeKeyError("the blob is a symlink");
        throw err;
      }
      try {
        const size = (await fh.stat()).size;
        const end = range.length === undefined ? size : Math.min(size, range.offset + range.length);
        for (let position = range.offset; position < end; ) {
          const want = Math.min(chunkBytes, end - position);
          // A fresh buffer per chunk: the consumer may hold on to it after we read the next one.
          const buffer = Buffer.allocUnsafe(want);
          const { bytesRead } = await fh.read(buffer, 0, want, position);
          if (bytesRead === 0) throw new Error("blob shorter than its recorded size");
          position += bytesRead;
          yield buffer.subarray(0, bytesRead);
        }
      } finally {
        await fh.close();
      }
    })();
  }

  async delete(key: string): Promise<boolean> {
    let path: string;
    try {
      path = await this.pathOf(key, false);
    } catch (err) {
      if (err instanceof BlobNotFoundError) return false;
      throw err;
    }
    try {
      await unlink(path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw err;
    }
  }

  async sweepTemps(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    for (const entry of await readdir(this.tmpDir)) {
      if (!entry.endsWith(".part")) continue;
      const path = join(this.tmpDir, entry);
      try {
        // mtime moves with every write, so only uploads that stopped writing long ago qualify.
        if ((await stat(path)).mtimeMs >= cutoff) continue;
        await unlink(path);
        removed++;
      } catch (err) {
        // Gone meanwhile: committed or aborted by its upload, or swept by another replica.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
    return removed;
  }

  async *listKeys(olderThanMs: number): AsyncIterable<string> {
    const cutoff = Date.now() - olderThanMs;
    // Keys are <tenant>/<id> (two levels); anything else under blobs/ is not ours to judge.
    for (const tenant of await readdir(this.blobsDir, { withFileTypes: true })) {
      if (!tenant.isDirectory()) continue;
      let entries: string[];
      try {
        entries = await readdir(join(this.blobsDir, tenant.name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw err;
      }
      for (const name of entries) {
        const key = `${tenant.name}/${name}`;
        try {
          keySegments(key);
          const info = await lstat(join(this.blobsDir, tenant.name, name));
          if (info.isFile() && info.mtimeMs < cutoff) yield key;
        } catch (err) {
          if (err instanceof UnsafeKeyError || (err as NodeJS.ErrnoException).code === "ENOENT") continue;
          throw err;
        }
      }
    }
  }
}

class DiskWriter implements BlobWriter {
  private closed = false;
  private done = false;

  constructor(
    private readonly store: DiskBlobStore,
    private readonly fh: FileHandle,
    private readonly tmp: string,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    if (this.closed) throw new Error("write after commit or abort");
    try {
      let offset = 0;
      while (offset < chunk.byteLength) {
        const { bytesWritten } = await this.fh.write(chunk, offset, chunk.byteLength - offset);
        offset += bytesWritten;
      }
    } catch (err) {
      if (isFull(err)) throw new StorageFullError("no space left while writing");
      throw err;
    }
  }

  async commit(key: string): Promise<void> {
    if (this.closed) throw new Error("commit after commit or abort");
    try {
      await this.fh.sync();
      // Read-only on disk too: immutable once written, even for a careless operator's tooling.
      await this.fh.chmod(0o440);
    } catch (err) {
      if (isFull(err)) throw new StorageFullError("no space left while syncing");
      throw err;
    } finally {
      this.closed = true;
      await this.fh.close();
    }
    await this.store.publish(this.tmp, key);
    this.done = true;
  }

  async abort(): Promise<void> {
    if (this.done) return;
    this.done = true;
    if (!this.closed) {
      this.closed = true;
      await this.fh.close().catch(() => undefined);
    }
    await unlink(this.tmp).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  }
}
