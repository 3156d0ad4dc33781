// A bounded, in-memory record of blobs this process stored, so that the same process can use them again
// without reading them back. Oldest first out once the byte budget is exceeded; an entry is handed out
// once (a finalize zips each item PDF once), which frees it early.

/** Enough for several full 200-item jobs of typical PDFs; a miss only costs a read. */
export const RECENT_BLOB_BYTES = 64 * 1024 * 1024;

export class RecentBlobs {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get size(): number {
    return this.entries.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  remember(tenant: string, id: string, data: Uint8Array): void {
    if (data.byteLength > this.maxBytes) return;
    const key = keyOf(tenant, id);
    this.drop(key);
    // A copy: the caller's buffer may be reused or belong to a larger allocation.
    this.entries.set(key, Buffer.from(data));
    this.bytes += data.byteLength;
    for (const [k] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k);
    }
  }

  /** The blob if remembered for exactly this tenant, forgetting it. */
  take(tenant: string, id: string): Buffer | undefined {
    const key = keyOf(tenant, id);
    const data = this.entries.get(key);
    if (data) this.drop(key);
    return data;
  }

  private drop(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.bytes -= old.byteLength;
  }
}

// Tenants and ids are validated identifiers without NUL, so the pair is unambiguous.
const keyOf = (tenant: string, id: string) => `${tenant}\u0000${id}`;
