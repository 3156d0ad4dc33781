import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildZip, Crc32, crc32, crc32ByTable, ZipWriter } from "./index.js";

describe("zip writer", () => {
  it("computes the standard CRC-32", () => {
    expect(crc32(Buffer.from("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array())).toBe(0);
    // Streamed over chunks, the same value.
    const c = new Crc32();
    for (const part of ["1234", "5", "6789"]) c.update(Buffer.from(part));
    expect(c.digest()).toBe(0xcbf43926);
  });

  it("gets the same CRC-32 from zlib and from the table loop, whole or in chunks", () => {
    let seed = 7;
    const data = Uint8Array.from({ length: 100_003 }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
    const whole = crc32ByTable(data);
    expect(crc32(data)).toBe(whole);
    const chunked = new Crc32();
    for (let o = 0; o < data.length; o += 4099) chunked.update(data.subarray(o, o + 4099));
    expect(chunked.digest()).toBe(whole);
  });

  it("writes an archive that the system unzip tests and extracts byte for byte", () => {
    const entries = [
      { name: "items/t-0001.pdf", data: Buffer.from("%PDF-1.3 fake\n\u0000\u00ff binary") },
      { name: "manifest.json", data: Buffer.from(JSON.stringify({ a: "ção" })) },
      { name: "empty.txt", data: new Uint8Array() },
    ];
    const dir = mkdtempSync(join(tmpdir(), "zip-"));
    try {
      const zip = buildZip(entries);
      expect(Buffer.compare(zip, buildZip(entries))).toBe(0);
      writeFileSync(join(dir, "a.zip"), zip);
      execFileSync("unzip", ["-tq", join(dir, "a.zip")]);
      execFileSync("unzip", ["-q", join(dir, "a.zip"), "-d", join(dir, "out")]);
      for (const e of entries) expect(Buffer.compare(readFileSync(join(dir, "out", e.name)), Buffer.from(e.data))).toBe(0);
      const listing = execFileSync("unzip", ["-Z1", join(dir, "a.zip")], { encoding: "utf8" });
      expect(listing.trim().split("\n")).toEqual(entries.map((e) => e.name));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("streaming zip writer", () => {
  it("writes, entry by entry, the same bytes as the whole-archive writer", () => {
    const entries = [1, 2, 3].map((n) => ({ name: `danfse/${n}.pdf`, data: Buffer.alloc(1000 * n, n) }));
    const w = new ZipWriter();
    const streamed = Buffer.concat([...entries.flatMap((e) => w.add(e)), w.finish()]);
    expect(Buffer.compare(streamed, buildZip(entries))).toBe(0);
    expect(w.size).toBe(entries.reduce((n, e) => n + 30 + e.name.length + e.data.length, 0));
  });
});
