import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../gen/malha/common/v1/common_pb.js";
import { ConfigError, EnvReader } from "../config/env.js";
import { createPageTokens, filterDigest, MAX_PAGE_TOKEN_CHARS, readPageTokenSecret, servicePageTokens } from "./page-token.js";

const tokens = createPageTokens({ secret: Buffer.from("test-secret-0123456789"), errorDomain: "malha.test" });
const filter = { tenant: "acme", state: 2, since: new Date("2026-01-02T03:04:05Z"), big: 7n };

function refusal(fn: () => unknown): ConnectError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    return err as ConnectError;
  }
  throw new Error("expected a refusal");
}

function expectRefused(fn: () => unknown, why: RegExp): void {
  const err = refusal(fn);
  expect(err.code).toBe(Code.InvalidArgument);
  expect(err.rawMessage).toMatch(/^invalid page_token: /);
  expect(err.rawMessage).toMatch(why);
  const [info] = err.findDetails(ErrorInfoSchema);
  expect(info).toMatchObject({ reason: "INVALID_PAGE_TOKEN", domain: "malha.test" });
}

describe("page tokens", () => {
  it("round-trip a position for the same method and filters; an empty token is the first page", () => {
    const token = tokens.encode("ListThings", filter, ["2026-01-02 03:04:05.000", 42]);
    expect(tokens.decode("ListThings", { ...filter }, token, ["string", "int"])).toEqual(["2026-01-02 03:04:05.000", 42]);
    expect(tokens.decode("ListThings", filter, "", ["int"])).toBeUndefined();
  });

  it("digest filters canonically: key order and $typeName do not matter, values do", () => {
    expect(filterDigest({ a: 1, b: "x" })).toBe(filterDigest({ $typeName: "m.v1.R", b: "x", a: 1, c: undefined }));
    expect(filterDigest({ a: 1, b: "x" })).not.toBe(filterDigest({ a: 1, b: "y" }));
    expect(filterDigest(1n)).not.toBe(filterDigest(1));
  });

  it("refuse a token reused with other filters", () => {
    const token = tokens.encode("ListThings", filter, [1]);
    expectRefused(() => tokens.decode("ListThings", { ...filter, state: 3 }, token, ["int"]), /other filters/);
  });

  it("refuse a token of another method", () => {
    const token = tokens.encode("ListThings", filter, [1]);
    expectRefused(() => tokens.decode("ListOtherThings", filter, token, ["int"]), /issued for ListThings, not ListOtherThings/);
  });

  it("refuse a tampered position or signature, and a token signed with another secret", () => {
    const token = tokens.encode("ListThings", filter, [1]);
    const [body, sig] = token.split(".") as [string, string];
    const forged = Buffer.from(JSON.stringify({ m: "ListThings", f: filterDigest(filter), k: [999] })).toString("base64url");
    expectRefused(() => tokens.decode("ListThings", filter, `${forged}.${sig}`, ["int"]), /signature mismatch/);
    const flipped = `${body}.${sig.startsWith("A") ? "B" : "A"}${sig.slice(1)}`;
    expectRefused(() => tokens.decode("ListThings", filter, flipped, ["int"]), /signature mismatch/);
    const other = createPageTokens({ secret: Buffer.from("another-secret-0123456789"), errorDomain: "malha.test" });
    expectRefused(() => tokens.decode("ListThings", filter, other.encode("ListThings", filter, [1]), ["int"]), /signature mismatch/);
  });

  it("refuse garbage and a position of the wrong shape", () => {
    for (const garbage of ["x", "a.b.c", ".", "not base64!.sig", "%%%"]) {
      expectRefused(() => tokens.decode("ListThings", filter, garbage, ["int"]), /malformed|signature mismatch/);
    }
    const token = tokens.encode("ListThings", filter, ["abc"]);
    expectRefused(() => tokens.decode("ListThings", filter, token, ["int"]), /malformed position/);
    expectRefused(() => tokens.decode("ListThings", filter, token, ["string", "string"]), /malformed position/);
  });

  it("refuse an oversize token before decoding it", () => {
    expectRefused(() => tokens.decode("ListThings", filter, "a".repeat(MAX_PAGE_TOKEN_CHARS + 1), ["int"]), /longer than 1024/);
  });
});

describe("readPageTokenSecret", () => {
  it("reads the configured secret, refuses a short one, and makes one up (flagged) when unset", () => {
    expect(readPageTokenSecret(new EnvReader({ X_SECRET: "0123456789abcdef" }), "X_SECRET")).toEqual({
      secret: Buffer.from("0123456789abcdef"),
      generated: false,
      variable: "X_SECRET",
    });
    expect(() => readPageTokenSecret(new EnvReader({ X_SECRET: "short" }), "X_SECRET")).toThrow(ConfigError);
    const made = readPageTokenSecret(new EnvReader({}), "X_SECRET");
    expect(made.generated).toBe(true);
    expect(made.secret).toHaveLength(32);
  });
});

describe("servicePageTokens", () => {
  it("says once that a made-up secret's tokens die with the process, and nothing for a configured one", () => {
    const lines: string[] = [];
    const log = { info: (msg: string) => void lines.push(msg) };
    const configured = servicePageTokens(readPageTokenSecret(new EnvReader({ X_SECRET: "0123456789abcdef" }), "X_SECRET"), "malha.x", log);
    expect(lines).toEqual([]);
    const made = servicePageTokens(readPageTokenSecret(new EnvReader({}), "X_SECRET"), "malha.x", log);
    expect(lines).toEqual(["X_SECRET unset: page tokens are valid for this process only"]);
    // Each under its own secret, refusing with the service's domain.
    const token = configured.encode("ListThings", filter, [1]);
    expect(configured.decode("ListThings", filter, token, ["int"])).toEqual([1]);
    expect(refusal(() => made.decode("ListThings", filter, token, ["int"])).findDetails(ErrorInfoSchema)[0]?.domain).toBe("malha.x");
  });
});
