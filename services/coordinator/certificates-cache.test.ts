// The cached view's rules with a scripted listing: one listing per period shared by concurrent callers,
// expiry honoured between listings, the last view kept while the vault is away, and an absent vault
// asked once per period rather than on every call.
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ActiveCertificates, type CertificateListing } from "./certificates.js";

const silent = pino({ level: "silent" });

describe("ActiveCertificates", () => {
  it("lists once per period, pages through, honours expiry, keeps the last view when the vault fails", async () => {
    let now = 1_000_000;
    let calls = 0;
    let failing = false;
    const pages: Record<string, CertificateListing> = {
      "": { certificates: [{ ibge: "3550308", notAfter: timestampFromMs(now + 10_000) }], nextPageToken: "p2" },
      p2: { certificates: [{ ibge: "3304557", notAfter: timestampFromMs(now + 500_000) }], nextPageToken: "" },
    };
    const cache = new ActiveCertificates({
      listActive: async (token, ibge) => {
        if (ibge !== undefined) return { certificates: [], nextPageToken: "" };
        calls++;
        if (failing) throw new Error("vault away");
        return pages[token]!;
      },
      refreshMs: 60_000,
      now: () => now,
      log: silent,
    });
    expect(await Promise.all([cache.has("3550308"), cache.has("3304557"), cache.has("3106200")])).toEqual([true, true, false]);
    expect(calls).toBe(2); // two pages, one listing for the three callers
    now += 20_000; // 3550308's certificate expired meanwhile; still within the period
    expect(await cache.has("3550308")).toBe(false);
    expect(calls).toBe(2);
    failing = true;
    now += 60_000;
    expect(await cache.has("3304557")).toBe(true); // the last view
    expect(calls).toBe(3);
    expect(await cache.has("3304557")).toBe(true);
    expect(calls).toBe(3); // not asked again before the period is over
  });

  it("confirms a no with the vault for that municipality, at most every few seconds, so a new import counts at once", async () => {
    let now = 0;
    const targeted: string[] = [];
    let imported = false;
    const cache = new ActiveCertificates({
      listActive: async (_token, ibge) => {
        if (ibge === undefined) return { certificates: [], nextPageToken: "" };
        targeted.push(ibge);
        return { certificates: imported ? [{ ibge, notAfter: timestampFromMs(now + 86_400_000) }] : [], nextPageToken: "" };
      },
      refreshMs: 60_000,
      now: () => now,
      log: silent,
    });
    expect(await cache.has("3550308")).toBe(false);
    expect(await cache.has("3550308")).toBe(false);
    expect(targeted).toEqual(["3550308"]);
    imported = true;
    now += 6_000;
    expect(await cache.has("3550308")).toBe(true);
    expect(await cache.has("3550308")).toBe(true);
    expect(targeted).toEqual(["3550308", "3550308"]);
  });

  it("answers unknown, not false, while the vault never answered", async () => {
    let calls = 0;
    const cache = new ActiveCertificates({
      listActive: async () => {
        calls++;
        throw new Error("connection refused");
      },
      refreshMs: 60_000,
      now: () => 5,
      log: silent,
    });
    expect(await cache.has("3550308")).toBeUndefined();
    expect(await cache.has("3550308")).toBeUndefined();
    expect(calls).toBe(1);
  });
});
