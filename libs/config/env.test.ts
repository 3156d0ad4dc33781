import { describe, expect, it } from "vitest";
import { ConfigError, EnvReader } from "./env.js";

const reader = (env: Record<string, string>) => new EnvReader(env);

function problem(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("EnvReader", () => {
  it("returns typed values and defaults", () => {
    const env = reader({ A: "7", B: "true", C: "1.5", D: "mysql://u:p@h:1/db", E: "debug" });
    expect(env.int("A", { min: 1 })).toBe(7);
    expect(env.bool("B")).toBe(true);
    expect(env.durationMs("C")).toBe(1500);
    expect(env.url("D", ["mysql:"])).toBe("mysql://u:p@h:1/db");
    expect(env.oneOf("E", ["info", "debug"] as const)).toBe("debug");
    expect(env.port("MISSING", { default: 50051 })).toBe(50051);
    expect(env.string("MISSING", { default: "x" })).toBe("x");
  });

  it("treats an empty value as unset", () => {
    expect(reader({ A: "  " }).int("A", { default: 3 })).toBe(3);
    expect(problem(() => reader({ A: "" }).string("A"))).toBe("config error: A is required");
  });

  it("names the variable and the problem in one line", () => {
    expect(problem(() => reader({}).url("MYSQL_URL", ["mysql:"]))).toBe("config error: MYSQL_URL is required (a mysql URL)");
    expect(problem(() => reader({ GRPC_PORT: "70000" }).port("GRPC_PORT"))).toBe(
      "config error: GRPC_PORT must be an integer between 0 and 65535, got 70000",
    );
    expect(problem(() => reader({ N: "ten" }).int("N"))).toMatch(/^config error: N must be an integer .* got a non-integer$/);
    expect(problem(() => reader({ B: "maybe" }).bool("B"))).toBe("config error: B must be true or false");
    expect(problem(() => reader({ L: "loud" }).oneOf("L", ["info", "debug"]))).toBe("config error: L must be one of info, debug");
  });

  it("never echoes a URL value, which may hold a password", () => {
    const msg = problem(() => reader({ MYSQL_URL: "postgres://u:s3cret@h/db" }).url("MYSQL_URL", ["mysql:"]));
    expect(msg).not.toContain("s3cret");
    expect(msg).toBe("config error: MYSQL_URL must use mysql: (expected a mysql URL)");
    expect(problem(() => reader({ MYSQL_URL: "not a url s3cret" }).url("MYSQL_URL", ["mysql:"]))).not.toContain("s3cret");
  });

  it("reports unreadable files with the reason", () => {
    expect(problem(() => reader({ F: "/nonexistent/file.pem" }).file("F"))).toBe(
      "config error: F names a file that cannot be read (ENOENT: /nonexistent/file.pem)",
    );
    expect(reader({}).file("F")).toBeUndefined();
    expect(problem(() => reader({}).file("F", { required: true }))).toMatch(/^config error: F is required/);
  });
});
