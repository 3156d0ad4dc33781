import { describe, expect, it } from "vitest";
import { RecentBlobs } from "./recent-blobs.js";

describe("RecentBlobs", () => {
  it("hands a blob out once, only to the tenant that stored it, as a copy", () => {
    const r = new RecentBlobs(1024);
    const data = Buffer.from("pdf bytes");
    r.remember("acme", "art_1", data);
    data.fill(0);
    expect(r.take("other", "art_1")).toBeUndefined();
    expect(r.take("acme", "art_1")?.toString()).toBe("pdf bytes");
    expect(r.take("acme", "art_1")).toBeUndefined();
    expect(r.totalBytes).toBe(0);
  });

  it("evicts the oldest entries beyond its byte budget and skips blobs larger than the budget", () => {
    const r = new RecentBlobs(10);
    r.remember("t", "a", Buffer.alloc(4, 1));
    r.remember("t", "b", Buffer.alloc(4, 2));
    r.remember("t", "c", Buffer.alloc(4, 3));
    expect(r.size).toBe(2);
    expect(r.totalBytes).toBe(8);
    expect(r.take("t", "a")).toBeUndefined();
    expect(r.take("t", "c")?.[0]).toBe(3);
    r.remember("t", "huge", Buffer.alloc(11));
    expect(r.take("t", "huge")).toBeUndefined();
  });

  it("replacing an id counts its bytes once", () => {
    const r = new RecentBlobs(100);
    r.remember("t", "a", Buffer.alloc(30));
    r.remember("t", "a", Buffer.alloc(20));
    expect(r.totalBytes).toBe(20);
    expect(r.size).toBe(1);
  });
});
