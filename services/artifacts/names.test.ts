import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { checkContentType, checkJobId, checkName, checkTenant } from "./names.js";

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as ConnectError).findDetails(ErrorInfoSchema)[0]?.reason ?? "(no reason)";
  }
  return undefined;
}

describe("artifact names", () => {
  it.each(["items/0001.pdf", "boletos-job_123.zip", "manifest.json", "a/b/c/d.e-f_g", ".hidden", "a..b", "x".repeat(255)])(
    "accepts %j unchanged",
    (name) => expect(checkName(name)).toBe(name),
  );

  it.each([
    "",
    "..",
    ".",
    "...",
    "../a",
    "a/..",
    "a/../b",
    "/abs",
    "a//b",
    "a/",
    "a\\b",
    "%2e%2e/a",
    "a%2fb",
    "a b",
    "a\nb",
    "ç",
    "x".repeat(256),
  ])("refuses %j with INVALID_NAME", (name) => {
    expect(reasonOf(() => checkName(name))).toBe("INVALID_NAME");
  });

  it("echoes a refused value quoted and cut short, never raw", () => {
    const err = (() => {
      try {
        checkName(`${"y".repeat(300)}\n`);
      } catch (e) {
        return e as ConnectError;
      }
    })();
    expect(err?.rawMessage).toContain('"yyyy');
    expect(err!.rawMessage.length).toBeLessThan(160);
    expect(err!.rawMessage).not.toContain("\n");
  });
});

describe("tenants, job ids and content types", () => {
  it("accepts plain tenants and refuses dot-only, slashes and overlong ones", () => {
    expect(checkTenant("acme-01.prod_x")).toBe("acme-01.prod_x");
    for (const t of ["", ".", "..", "a/b", "a b", "t".repeat(65)]) expect(reasonOf(() => checkTenant(t))).toBe("INVALID_TENANT");
  });

  it("allows an empty job id and refuses paths in it", () => {
    expect(checkJobId("")).toBe("");
    expect(checkJobId("job_01HX")).toBe("job_01HX");
    for (const j of ["a/b", "../x", "j".repeat(129)]) expect(reasonOf(() => checkJobId(j))).toBe("INVALID_JOB_ID");
  });

  it("accepts MIME types with parameters and refuses header injection", () => {
    expect(checkContentType("application/pdf")).toBe("application/pdf");
    expect(checkContentType("text/plain; charset=utf-8")).toBe("text/plain; charset=utf-8");
    for (const c of ["", "pdf", "text/html\r\nSet-Cookie: x=1", "a/b\u0000", "ç/x"]) {
      expect(() => checkContentType(c)).toThrow(ConnectError);
    }
  });
});
