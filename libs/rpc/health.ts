import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from "../gen/health/v1/health_pb.js";

export { ServingStatus };

/**
 * Serving status per service name, as grpc.health.v1 sees it. The empty name is the server as a
 * whole (what Kubernetes' native gRPC probe asks for).
 */
export class HealthRegistry {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly listeners = new Set<() => void>();
  private closed = false;

  constructor(services: readonly string[]) {
    this.statuses.set("", ServingStatus.NOT_SERVING);
    for (const s of services) this.statuses.set(s, ServingStatus.NOT_SERVING);
  }

  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  set(service: string, status: ServingStatus): void {
    if (!this.statuses.has(service)) throw new Error(`unknown health service ${service}`);
    this.statuses.set(service, status);
    this.notify();
  }

  setAll(status: ServingStatus): void {
    for (const name of this.statuses.keys()) this.statuses.set(name, status);
    this.notify();
  }

  entries(): [string, ServingStatus][] {
    return [...this.statuses.entries()];
  }

  /** Ends every Watch stream, so HTTP/2 sessions can drain during shutdown. */
  close(): void {
    this.closed = true;
    this.notify();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private notify(): void {
    for (const fn of [...this.listeners]) fn();
  }
}

function response(status: ServingStatus): HealthCheckResponse {
  return create(HealthCheckResponseSchema, { status });
}

export function healthService(registry: HealthRegistry): ServiceImpl<typeof Health> {
  return {
    check(req) {
      const status = registry.get(req.service);
      if (status === undefined) throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      return response(status);
    },
    list() {
      return { statuses: Object.fromEntries(registry.entries().map(([name, s]) => [name, response(s)])) };
    },
    async *watch(req, ctx) {
      // Per the health protocol, an unknown service is reported, not refused: it may register later.
      const current = () => registry.get(req.service) ?? ServingStatus.SERVICE_UNKNOWN;
      let last = current();
      yield response(last);
      while (!registry.isClosed && !ctx.signal.aborted) {
        await new Promise<void>((resolve) => {
          const off = registry.onChange(() => {
            off();
            ctx.signal.removeEventListener("abort", onAbort);
            resolve();
          });
          const onAbort = () => {
            off();
            resolve();
          };
          ctx.signal.addEventListener("abort", onAbort, { once: true });
        });
        const now = current();
        if (now !== last) {
          last = now;
          yield response(now);
        }
      }
    },
  };
}
