// The storage seam. The service decides keys (tenant/artifact id, never a caller's name) and keeps the
// metadata; a backend only stores immutable byte sequences under those keys. The disk backend is the only
// one implemented; an S3-compatible one maps onto the same four operations:
//   begin/write → CreateMultipartUpload + UploadPart (or a local spool file + PutObject for small blobs),
//   commit      → CompleteMultipartUpload under the key (with If-None-Match: * where the store has it),
//   abort       → AbortMultipartUpload,
//   read        → GetObject with Range: bytes=offset-(offset+length-1),
//   delete      → DeleteObject (idempotent), sweepTemps → a bucket lifecycle rule on stale multipart uploads,
//   listKeys    → ListObjectsV2, filtered on LastModified.

export interface ReadRange {
  offset: number;
  /** Bytes from offset; undefined = to the end. */
  length?: number;
}

export interface BlobWriter {
  /** Appends one chunk; resolves once the backend took it, which gives the upload its backpressure. */
  write(chunk: Uint8Array): Promise<void>;
  /**
   * Makes the content durable and then visible under `key` in one atomic step: a reader sees the whole
   * blob or nothing. Keys are fresh for every upload, so this never replaces an existing blob.
   */
  commit(key: string): Promise<void>;
  /** Discards what was written. Idempotent; safe after a failed write or commit. */
  abort(): Promise<void>;
}

export interface BlobStore {
  /** Opens a new, invisible upload. */
  begin(): Promise<BlobWriter>;
  /** The content of `key` within `range`, in order, in chunks of at most `chunkBytes`. */
  read(key: string, range: ReadRange, chunkBytes: number): Promise<AsyncIterable<Uint8Array>>;
  /** Removes a blob; false when it was already gone (another replica's sweep got there first). */
  delete(key: string): Promise<boolean>;
  /** Removes leftovers of uploads whose process died, untouched for `olderThanMs`; returns how many. */
  sweepTemps(olderThanMs: number): Promise<number>;
  /** Every stored key last written more than `olderThanMs` ago (for the orphan scan). */
  listKeys(olderThanMs: number): AsyncIterable<string>;
}

/** The key names no blob (never written, or already swept). */
export class BlobNotFoundError extends Error {
  override name = "BlobNotFoundError";
}

/** The backend has no room left (ENOSPC, EDQUOT, a bucket quota). */
export class StorageFullError extends Error {
  override name = "StorageFullError";
}

/** A key that would leave the storage root, or a root tampered with (a symlink where a directory belongs). */
export class UnsafeKeyError extends Error {
  override name = "UnsafeKeyError";
}
