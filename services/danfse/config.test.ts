import { describe, expect, it } from "vitest";
import { ConfigError, EnvReader } from "../../libs/config/env.js";
import { readDanfseConfig } from "./config.js";

const base = { MYSQL_URL: "mysql://malha:malha@127.0.0.1:3306/malha" };
const read = (env: Record<string, string>) => readDanfseConfig(new EnvReader(env));

describe("danfse config", () => {
  it("defaults: 64 notes in flight (batches of 32), 64 MB per render thread, 10,000 notes per export, 2 s heartbeats, 60 s to call an export interrupted", () => {
    expect(read(base)).toMatchObject({
      exportConcurrency: 64,
      renderThreadHeapMb: 64,
      exportMaxNotes: 10_000,
      heartbeatMs: 2_000,
      exportStaleMs: 60_000,
      linkTtlMs: 3_600_000,
      migrateOnStart: true,
    });
  });

  it("names the variable of each mistake: no MySQL, a cap the zip cannot hold, a stale time a live export could miss", () => {
    const refusal = (env: Record<string, string>) => {
      try {
        read(env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refusal({})).toMatch(/^config error: MYSQL_URL /);
    expect(refusal({ ...base, DANFSE_EXPORT_MAX_NOTES: "70000" })).toMatch(/^config error: DANFSE_EXPORT_MAX_NOTES /);
    expect(refusal({ ...base, DANFSE_EXPORT_HEARTBEAT_SECONDS: "2", DANFSE_EXPORT_STALE_SECONDS: "5" })).toMatch(
      /^config error: DANFSE_EXPORT_STALE_SECONDS must be at least 3 × DANFSE_EXPORT_HEARTBEAT_SECONDS/,
    );
  });
});
