import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createPageTokenCodec, filterFingerprint, pageSize } from "./page-token.js";

const codec = createPageTokenCodec(Buffer.from("s".repeat(32)));

describe("page tokens", () => {
  it("round-trips the key for the same method and filters", () => {
    const filters = { ibge: "3550308", since: new Date("2025-01-01T00:00:00Z"), nsu: 5n };
    const token = codec.encode("ListDocuments", filters, ["1", "DISTRIBUICAO", "42"]);
    expect(codec.decode("ListDocuments", { ...filters }, token)).toEqual(["1", "DISTRIBUICAO", "42"]);
    expect(codec.decode("ListDocuments", filters, "")).toBeUndefined();
  });

  it("refuses tampering, other methods, other filters and other keys", () => {
    const token = codec.encode("ListRuns", { ibge: "3550308" }, ["7"]);
    const [body, sig] = token.split(".") as [string, string];
    const edited = Buffer.from(Buffer.from(body, "base64url").toString().replace('"7"', '"8"')).toString("base64url");
    expect(() => codec.decode("ListRuns", { ibge: "3550308" }, `${edited}.${sig}`)).toThrow(/signature/);
    expect(() => codec.decode("ListEvents", { ibge: "3550308" }, token)).toThrow(/issued for ListRuns/);
    expect(() => codec.decode("ListRuns", { ibge: "3304557" }, token)).toThrow(/filters changed/);
    expect(() => createPageTokenCodec(Buffer.from("other-secret-xx")).decode("ListRuns", { ibge: "3550308" }, token)).toThrow(ConnectError);
    expect(() => codec.decode("ListRuns", {}, "a.b.c")).toThrow(/malformed/);
  });

  it("fingerprints dates and bigints by value", () => {
    expect(filterFingerprint({ a: new Date(0) })).not.toBe(filterFingerprint({ a: new Date(1) }));
    expect(filterFingerprint({ a: 1n, b: undefined })).toBe(filterFingerprint({ a: 1n }));
  });

  it("sizes pages: default, clamp, refuse negative", () => {
    expect(pageSize(0, 50, 500)).toBe(50);
    expect(pageSize(9000, 50, 500)).toBe(500);
    expect(() => pageSize(-1, 50, 500)).toThrow(ConnectError);
  });
});
