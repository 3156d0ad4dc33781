// Who may call the coordinator: every method is open to the mesh, whose network is the boundary (the
// console, which checks its operators' roles itself, and the CLI). A new method is refused at start
// until it is added here. docs/decisions/0022-authentication-interceptor.md.
import type { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import type { AccessTable } from "../../libs/rpc/auth/access.js";

export const coordinatorAccess: AccessTable<typeof CoordinatorService> = {
  syncNow: "public",
  syncAll: "public",
  getFeedStatus: "public",
  listFeedStatus: "public",
  listRuns: "public",
  cancelSync: "public",
};
