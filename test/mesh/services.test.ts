// Every service, started from its main.ts as a real process, reachable over a real socket.
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../libs/gen/health/v1/health_pb.js";
import { ServerReflection } from "../../libs/gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1alpha } from "../../libs/gen/grpc/reflection/v1alpha/reflection_pb.js";
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import type { MeshServiceName } from "../../libs/rpc/mesh.js";
import { bufCurl } from "../support/buf-curl.js";
import { grpcJsClient, unary } from "../support/grpcjs.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../support/mysql.js";
import { serviceEnv } from "../support/mesh-env.js";
import { startService, type ServiceProcess } from "../support/service-process.js";

let db: ThrowawayDatabase;
beforeAll(async () => {
  db = await createThrowawayDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/**
 * One RPC per service called with an empty request over reflection: it is refused with the precise code
 * (a required field is missing, or the empty id names nothing), never a crash or an accidental success.
 */
const SERVICES: { name: MeshServiceName; typeName: string; method: string; code: string }[] = [
  { name: "vault", typeName: "malha.vault.v1.VaultService", method: "GetCertificate", code: "not_found" },
  { name: "adn-gateway", typeName: "malha.adn.v1.AdnGatewayService", method: "FetchBatch", code: "invalid_argument" },
  { name: "store", typeName: "malha.store.v1.StoreService", method: "GetMunicipality", code: "invalid_argument" },
  { name: "artifacts", typeName: "malha.artifacts.v1.ArtifactsService", method: "ListArtifacts", code: "invalid_argument" },
  { name: "coordinator", typeName: "malha.coordinator.v1.CoordinatorService", method: "SyncNow", code: "invalid_argument" },
  { name: "billing", typeName: "malha.billing.v1.BillingService", method: "GetBoletoJob", code: "invalid_argument" },
  { name: "danfse", typeName: "malha.danfse.v1.DanfseService", method: "GetDanfseExport", code: "not_found" },
];

const envFor = (name: MeshServiceName) => serviceEnv(name, db.url);

describe.each(SERVICES)("$name started from main.ts", ({ name, typeName, method, code }) => {
  let svc: ServiceProcess;
  beforeAll(async () => {
    svc = await startService(name, envFor(name));
  });
  afterAll(async () => {
    svc?.kill("SIGKILL");
  });

  it("reports SERVING for the server and for its service", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: svc.baseUrl }));
    expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
    expect((await health.check({ service: typeName })).status).toBe(Status.SERVING);
  });

  it("lists its service through reflection and refuses an empty request with a precise code", async () => {
    const list = await bufCurl(["--list-services", svc.baseUrl]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split("\n")).toEqual(
      expect.arrayContaining([typeName, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]),
    );
    // buf curl resolves the request type through reflection: this fails if any imported file is missing.
    const call = await bufCurl(["-d", "{}", `${svc.baseUrl}/${typeName}/${method}`]);
    expect(call.code).not.toBe(0);
    expect(JSON.parse(call.stderr)).toMatchObject({ code });
  });

  it("stops on SIGTERM with exit code 0", async () => {
    svc.kill("SIGTERM");
    expect(await svc.exited).toEqual({ code: 0, signal: null });
  });
});

describe("a service seen by different clients", () => {
  let vault: ServiceProcess;
  beforeAll(async () => {
    vault = await startService("vault", envFor("vault"));
  });
  afterAll(() => vault?.kill("SIGKILL"));

  it("answers @grpc/grpc-js with health and a typed error", async () => {
    const address = `127.0.0.1:${vault.port}`;
    const health = grpcJsClient(Health, address);
    expect(await unary<{ status: Status }>(health, "check", { service: "" })).toMatchObject({ status: Status.SERVING });
    const client = grpcJsClient(VaultService, address);
    const err = await unary(client, "getCertificate", { id: "999999" }).catch((e: grpc.ServiceError) => e);
    expect((err as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
    health.close();
    client.close();
  });

  it("lets buf curl list methods and call Health/Check without local protos", async () => {
    const methods = await bufCurl(["--list-methods", vault.baseUrl]);
    expect(methods.code, methods.stderr).toBe(0);
    expect(methods.stdout).toContain("malha.vault.v1.VaultService/ImportCertificate");
    expect(methods.stdout).toContain("grpc.health.v1.Health/Watch");
    const v1alpha = await bufCurl(["--reflect-protocol", "grpc-v1alpha", "--list-services", vault.baseUrl]);
    expect(v1alpha.stdout).toContain("malha.vault.v1.VaultService");
    const check = await bufCurl(["-d", '{"service":"malha.vault.v1.VaultService"}', `${vault.baseUrl}/grpc.health.v1.Health/Check`]);
    expect(check.code, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toEqual({ status: "SERVING" });
  });

  it("describes a service through reflection v1 and v1alpha (file, methods, transitive imports)", async () => {
    for (const reflection of [ServerReflection, ServerReflectionV1alpha]) {
      const client = createClient(reflection, createGrpcTransport({ baseUrl: vault.baseUrl }));
      async function* requests() {
        yield { messageRequest: { case: "fileContainingSymbol" as const, value: "malha.vault.v1.VaultService.ImportCertificate" } };
        yield { messageRequest: { case: "fileContainingSymbol" as const, value: "malha.nope.Missing" } };
      }
      const answers = [];
      for await (const res of client.serverReflectionInfo(requests())) answers.push(res);
      const found = answers[0]!.messageResponse;
      expect(found.case).toBe("fileDescriptorResponse");
      const files = (found.value as { fileDescriptorProto: Uint8Array[] }).fileDescriptorProto.map((b) =>
        fromBinary(FileDescriptorProtoSchema, b),
      );
      expect(files[0]!.name).toBe("malha/vault/v1/vault.proto");
      expect(files[0]!.service[0]!.method.map((m) => m.name)).toContain("GetClientCredentials");
      expect(files.map((f) => f.name)).toContain("google/protobuf/timestamp.proto");
      const missing = answers[1]!.messageResponse;
      expect(missing.case).toBe("errorResponse");
      expect((missing.value as { errorCode: number }).errorCode).toBe(Code.NotFound);
    }
  });

  it("streams SERVING then NOT_SERVING on Health.Watch when it receives SIGTERM, then exits 0", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: vault.baseUrl }));
    const seen: Status[] = [];
    try {
      for await (const res of health.watch({ service: "" })) {
        seen.push(res.status);
        if (seen.length === 1) vault.kill("SIGTERM");
      }
    } catch (err) {
      // The stream may end with the connection; what it delivered before that is what counts.
      expect(ConnectError.from(err).code).toBe(Code.Unavailable);
    }
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
    expect(await vault.exited).toEqual({ code: 0, signal: null });
  });
});
