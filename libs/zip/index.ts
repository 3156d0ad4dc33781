// A minimal zip writer: STORE method (PDFs are already compressed), CRC-32, no ZIP64 (an archive stays
// below 4 GiB and 65 535 entries). A fixed timestamp keeps the bytes a function of the contents, so
// rebuilding a zip after a restart yields the same artifact. The layout is split into headers and a central
// directory, so an archive can be whole in memory (`buildZip`), streamed entry by entry from data at hand
// (`ZipWriter`, the DANFSe exports) or composed around data streamed from storage (the artifacts service's
// ComposeZip).

import * as zlib from "node:zlib";

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** zlib's own CRC-32 (Node ≥ 20.15), about 20 times faster than the table loop kept for older Nodes. */
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

function tableCrc32(data: Uint8Array, value: number): number {
  let c = (value ^ 0xffffffff) >>> 0;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** CRC-32 computed over chunks as they stream. */
export class Crc32 {
  private value = 0;

  update(data: Uint8Array): void {
    this.value = nativeCrc32 ? nativeCrc32(data, this.value) : tableCrc32(data, this.value);
  }

  digest(): number {
    return this.value >>> 0;
  }
}

/** The table loop alone, for tests that hold it against zlib's. */
export const crc32ByTable = (data: Uint8Array): number => tableCrc32(data, 0);

export function crc32(data: Uint8Array): number {
  const c = new Crc32();
  c.update(data);
  return c.digest();
}

/** What the zip's headers need to know of an entry before its data. */
export interface ZipFile {
  name: string;
  size: number;
  crc: number;
}

/** 1980-01-01 00:00 in DOS format: the earliest representable time, used for every entry. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
const MAX_OFFSET = 0xfffffffe;

/** The local file header that precedes the entry's data. */
export function localHeader(f: ZipFile): Buffer {
  const name = Buffer.from(f.name, "utf8");
  const local = Buffer.alloc(30 + name.length);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4); // version needed
  local.writeUInt16LE(0x0800, 6); // UTF-8 names
  local.writeUInt16LE(0, 8); // STORE
  local.writeUInt16LE(DOS_TIME, 10);
  local.writeUInt16LE(DOS_DATE, 12);
  local.writeUInt32LE(f.crc, 14);
  local.writeUInt32LE(f.size, 18);
  local.writeUInt32LE(f.size, 22);
  local.writeUInt16LE(name.length, 26);
  local.writeUInt16LE(0, 28);
  name.copy(local, 30);
  return local;
}

/** The central directory and end record that follow the last entry's data. */
export function centralDirectory(files: readonly ZipFile[]): Buffer {
  if (files.length > 0xffff) throw new Error("too many zip entries for a zip without ZIP64");
  const parts: Buffer[] = [];
  let offset = 0;
  for (const f of files) {
    const name = Buffer.from(f.name, "utf8");
    if (offset + 30 + name.length + f.size > MAX_OFFSET) throw new Error("zip larger than 4 GiB needs ZIP64");
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(f.crc, 16);
    central.writeUInt32LE(f.size, 20);
    central.writeUInt32LE(f.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    parts.push(central, name);
    offset += 30 + name.length + f.size;
  }
  const centralSize = parts.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, end]);
}

/** The whole zip in memory, for small archives and as the reference the streamed layout must match. */
export function buildZip(entries: readonly ZipEntry[]): Buffer {
  const files = entries.map((e) => ({ name: e.name, size: e.data.length, crc: crc32(e.data) }));
  const central = centralDirectory(files);
  return Buffer.concat([...entries.flatMap((e, i) => [localHeader(files[i]!), Buffer.from(e.data)]), central]);
}

export interface ZipEntry {
  name: string;
  data: Uint8Array;
}

/**
 * Writes a zip entry by entry: `add` returns the bytes of one entry (header + data) to send on at once,
 * `finish` the central directory. Only each entry's name, size and CRC are kept, so a zip of thousands of
 * PDFs streams through a constant amount of memory.
 */
export class ZipWriter {
  private readonly files: ZipFile[] = [];
  private offset = 0;

  /** Bytes written so far. */
  get size(): number {
    return this.offset;
  }

  add(e: ZipEntry): Buffer[] {
    if (this.files.length >= 0xffff) throw new Error("too many zip entries for a zip without ZIP64");
    const f: ZipFile = { name: e.name, size: e.data.length, crc: crc32(e.data) };
    const local = localHeader(f);
    if (this.offset + local.length + f.size > MAX_OFFSET) throw new Error("zip larger than 4 GiB needs ZIP64");
    this.files.push(f);
    this.offset += local.length + f.size;
    return [local, Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength)];
  }

  /** The central directory and its end record; nothing may be added after. */
  finish(): Buffer {
    return centralDirectory(this.files.splice(0));
  }
}
